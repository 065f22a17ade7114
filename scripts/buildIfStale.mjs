#!/usr/bin/env node
/**
 * Builds the server (tsc → dist/) and the console (vite → dist/console/) only when their sources are
 * newer than the last build, so `npm start` on an installed checkout starts at once. `npm ci` runs it
 * (the `prepare` script); a fresh clone has no dist/ and builds both. `--always` (npm run build) builds both.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Newest modification time under the given paths (files or folders), in ms. */
function newest(paths) {
  let latest = 0;
  const visit = (full) => {
    let stat;
    try {
      stat = fs.statSync(full);
    } catch {
      return;
    }
    if (stat.isDirectory()) {
      for (const name of fs.readdirSync(full)) if (name !== 'node_modules') visit(path.join(full, name));
    } else {
      latest = Math.max(latest, stat.mtimeMs);
    }
  };
  for (const p of paths) visit(path.join(root, p));
  return latest;
}

const builtAt = (stamp) => {
  try {
    return fs.statSync(path.join(root, stamp)).mtimeMs;
  } catch {
    return 0;
  }
};

const parts = [
  {
    name: 'server',
    inputs: ['src', 'migrations', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'],
    stamp: 'dist/.server-built',
    command: ['npx', ['tsc', '-p', 'tsconfig.build.json']],
  },
  {
    name: 'console',
    inputs: ['console', 'package-lock.json'],
    stamp: 'dist/console/.console-built',
    command: ['npx', ['vite', 'build', '--config', 'console/vite.config.ts']],
  },
];

const always = process.argv.includes('--always');

for (const part of parts) {
  const started = Date.now();
  if (!always && newest(part.inputs) < builtAt(part.stamp)) continue;
  const reason = builtAt(part.stamp) === 0 ? 'not built yet' : 'its sources changed since the last build';
  if (!always) process.stderr.write(`Building the ${part.name} (${reason})…\n`);
  const [command, args] = part.command;
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
  fs.mkdirSync(path.dirname(path.join(root, part.stamp)), { recursive: true });
  // The stamp's time is when the build started: a source saved during the build is seen as newer.
  fs.writeFileSync(path.join(root, part.stamp), '');
  fs.utimesSync(path.join(root, part.stamp), new Date(started), new Date(started));
}
