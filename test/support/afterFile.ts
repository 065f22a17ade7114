/**
 * What a test file made and must not leave behind (its hubs, child processes and temp directories),
 * put away when the file ends, after a failing test too: test/support/setupFile.ts runs `putAway` in the
 * last `afterAll` of every file. Put away newest first, so a hub stops before its directory goes.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const made: (() => unknown)[] = [];

/** Runs `putAway` when the test file ends (a test may also do it sooner: make it safe to run twice). */
export function afterFile(putAway: () => unknown): void {
  made.push(putAway);
}

/** Puts away all that `afterFile` was given, newest first; fails the file with the first error. */
export async function putAway(): Promise<void> {
  const errors: unknown[] = [];
  for (const one of made.splice(0).reverse()) {
    try {
      await one();
    } catch (error) {
      errors.push(error);
    }
  }
  if (errors.length > 0) throw errors[0];
}

/**
 * A new directory in the system's temp directory, readable by its owner only (a hub's configuration
 * file holds its keys), removed with all it holds when the test file ends.
 */
export function tempDir(prefix = 'hub-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(dir, 0o700);
  afterFile(() => fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 }));
  return dir;
}
