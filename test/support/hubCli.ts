/**
 * The hub's command line (src/cli.ts) as a child process, as an operator runs it: its output so far, its
 * exit, and a wait for a line of its output; and a hub started that way on a data directory, once it
 * listens. What a test file leaves running is killed when it ends (`killCliProcesses` does it sooner).
 */
import { spawn } from 'node:child_process';
import type { ChildProcessByStdio } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterFile } from './afterFile.js';
import { writeConfiguration } from './testHub.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
// tsx by its path: the working directory may be an empty temp folder.
const TSX = pathToFileURL(path.join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;

export interface CliProcess {
  proc: ChildProcessByStdio<null, Readable, Readable>;
  /** Its exit code; -1 when a signal ended it. */
  exited: Promise<number | null>;
  /** The first match of `pattern` in its standard output; rejects when it exits without one. */
  waitFor(pattern: RegExp): Promise<RegExpExecArray>;
  output(): string;
  errors(): string;
}

const running = new Map<CliProcess['proc'], CliProcess['exited']>();

/** Runs src/cli.ts with `args`, on 127.0.0.1 and a port the system chooses unless `env` says otherwise. */
export function runCli(args: string[], env: Record<string, string> = {}, cwd = ROOT): CliProcess {
  const proc = spawn(process.execPath, ['--import', TSX, path.join(ROOT, 'src/cli.ts'), ...args], {
    cwd,
    env: { ...process.env, HUB_PORT: '0', HUB_HOST: '127.0.0.1', HUB_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) =>
    proc.on('exit', (code, signal) => {
      running.delete(proc);
      resolve(code ?? (signal ? -1 : null));
    }),
  );
  running.set(proc, exited);
  afterFile(() => kill(proc));
  const waitFor = (pattern: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const timer = setInterval(() => {
        const match = pattern.exec(out);
        if (match) {
          clearInterval(timer);
          resolve(match);
        }
      }, 20);
      void exited.then((code) => {
        clearInterval(timer);
        reject(new Error(`exited with ${code}: ${err}`));
      });
    });
  return { proc, exited, waitFor, output: () => out, errors: () => err };
}

/**
 * A hub on `dataDir` (with the test configuration when the directory has no file yet), its failed
 * authentications not delayed; resolves with its URL once it listens.
 */
export async function startHubProcess(
  dataDir: string,
  env: Record<string, string> = {},
): Promise<CliProcess & { url: string }> {
  const config = path.join(dataDir, 'hub.config.xml');
  if (!fs.existsSync(config)) writeConfiguration(config);
  const cli = runCli([], { HUB_DATA_DIR: dataDir, HUB_LOG_LEVEL: 'error', HUB_AUTH_FAILURE_DELAY_MS: '0', ...env });
  const [, url] = await cli.waitFor(/hub listening on (http:\/\/\S+)/);
  return { ...cli, url };
}

/** SIGKILLs `proc` if it still runs; resolves once it exited. */
async function kill(proc: CliProcess['proc']): Promise<void> {
  const exited = running.get(proc);
  if (!exited) return;
  proc.kill('SIGKILL');
  await exited;
}

/** SIGKILLs every process this test file started that still runs. */
export function killCliProcesses(): void {
  for (const proc of running.keys()) proc.kill('SIGKILL');
}
