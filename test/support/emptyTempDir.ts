/**
 * vitest's global setup (vitest.config.ts): the run gets a temp directory of its own (TMPDIR, which
 * the test files and the processes they start inherit), and fails if anything is left in it once every
 * file has ended: each test removes the temp files it made (test/support/afterFile.ts). The directory
 * goes at the end either way.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * What tools keep there on purpose, across their runs: tsx's compile cache (the hub processes' loader),
 * and on Node 22 and later Node's own module compile cache (`module.enableCompileCache()`, which the
 * tools the tests start call: CI's Node 22 run found it).
 */
const CACHES = /^(?:tsx-\d+|node-compile-cache)$/;

export function setup(): () => void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hub-tests-'));
  // Others may pass through (not list): a throwaway PostgreSQL runs as postgres, nginx's workers as nobody.
  fs.chmodSync(dir, 0o711);
  process.env.TMPDIR = dir;
  return () => {
    const left = fs.readdirSync(dir).filter((name) => !CACHES.test(name));
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    if (left.length === 0) return;
    // A teardown's exception is only printed: the exit code says it.
    process.exitCode = 1;
    console.error(
      `\nThe tests left ${left.length} entries in their temp directory (make them with tempDir of ` +
        `test/support/afterFile.ts): ${left.sort().join(', ')}\n`,
    );
  };
}
