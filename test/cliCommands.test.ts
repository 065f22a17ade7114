/**
 * The command line as a new user meets it (issue 30): the first start's Admin key survives a start that
 * fails, `npx hub …` and each command's help, errors that name their cause and the path, and Ctrl-C on
 * `npm start`. Real processes on real temp directories, removed afterwards.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { killCliProcesses, runCli } from './support/hubCli.js';
import { get } from './support/testHub.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const made: string[] = [];
const scratch = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hub-cli-'));
  made.push(dir);
  return dir;
};

afterAll(() => {
  killCliProcesses();
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

/** A port something else listens on, and a way to free it. */
async function busyPort(): Promise<{ port: number; free(): Promise<void> }> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    free: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Runs `command args` in the checkout; resolves with its exit code and output (never rejects). */
function run(
  command: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(command, args, {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    proc.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const management = (key: string) => ({ SentinelName: 'Management', PackageName: 'CLI', AccessKey: key });

describe('the first Admin key', () => {
  it('survives a first start that fails on a busy port: the next start shows it once and it manages the hub', async () => {
    const dataDir = path.join(scratch(), 'data');
    const busy = await busyPort();
    const first = runCli([], { HUB_DATA_DIR: dataDir, HUB_PORT: String(busy.port) });
    expect(await first.exited).toBe(1);
    await busy.free();
    expect(first.errors()).toMatch(/^hub did not start: listen EADDRINUSE.*another program listens there/);
    const said = /access key (\S+) is in (\S+) \(only you can read it\)/.exec(first.errors());
    expect(said).not.toBeNull();
    const [, failedKey, keptIn] = said as RegExpExecArray;
    expect(keptIn).toBe(path.join(dataDir, 'first-admin-key'));
    expect(fs.statSync(keptIn).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(keptIn, 'utf8').trim()).toBe(failedKey);

    const second = runCli([], { HUB_DATA_DIR: dataDir });
    const [, url] = await second.waitFor(/hub listening on (http:\/\/\S+)/);
    expect(second.output()).toMatch(/The first start did not succeed/);
    const key = /access key \(not shown again\): (\S+)/.exec(second.output())?.[1];
    expect(key).toBe(failedKey);
    expect((await get({ url }, 'management/CheckAccess', management(key as string))).status).toBe(200);
    expect((await get({ url }, 'management/credentials', management(key as string))).status).toBe(200);
    expect(fs.existsSync(keptIn)).toBe(false);
    second.proc.kill('SIGTERM');
    expect(await second.exited).toBe(0);

    const third = runCli([], { HUB_DATA_DIR: dataDir });
    await third.waitFor(/hub listening on/);
    expect(third.output()).not.toMatch(/access key/);
    third.proc.kill('SIGTERM');
    expect(await third.exited).toBe(0);
  });

  it('a kept key the configuration no longer accepts is not shown (the file edited meanwhile)', async () => {
    const dataDir = path.join(scratch(), 'data');
    const busy = await busyPort();
    const first = runCli([], { HUB_DATA_DIR: dataDir, HUB_PORT: String(busy.port) });
    expect(await first.exited).toBe(1);
    await busy.free();
    const configPath = path.join(dataDir, 'hub.config.xml');
    const key = fs.readFileSync(path.join(dataDir, 'first-admin-key'), 'utf8').trim();
    fs.writeFileSync(configPath, fs.readFileSync(configPath, 'utf8').replace(key, 'an-operator-chose-this-key'));
    const second = runCli([], { HUB_DATA_DIR: dataDir });
    await second.waitFor(/hub listening on/);
    expect(second.output()).not.toMatch(/access key/);
    expect(fs.existsSync(path.join(dataDir, 'first-admin-key'))).toBe(false);
    second.proc.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });
});

describe('help', () => {
  const commands: [string[], RegExp][] = [
    [[], /^Usage: hub \[--help\] \[--version\]/],
    [['migrate'], /^Usage: .*hub migrate\n/],
    [['config'], /^Usage: .*hub config export \[FILE\]\n.*hub config import \[FILE\]\n/],
    [['config', 'export'], /^Usage: .*hub config export \[FILE\]\n\n/],
    [['config', 'import'], /^Usage: .*hub config import \[FILE\]\n\n/],
  ];

  it('each command prints its own usage with --help or -h, exit 0, touching nothing', async () => {
    const cwd = scratch();
    for (const [words, usage] of commands) {
      for (const flag of ['--help', '-h']) {
        const cli = runCli([...words, flag], {}, cwd);
        expect(await cli.exited, `${words.join(' ')} ${flag}`).toBe(0);
        expect(cli.output()).toMatch(usage);
        expect(cli.errors()).toBe('');
      }
    }
    expect(fs.readdirSync(cwd)).toEqual([]);
  });

  it('`hub config` alone and an unknown command exit 2 with the usage that helps', async () => {
    const config = runCli(['config']);
    expect(await config.exited).toBe(2);
    expect(config.errors()).toMatch(/^hub config needs export or import\n\nUsage: .*hub config export/);
    const unknown = runCli(['frobnicate']);
    expect(await unknown.exited).toBe(2);
    expect(unknown.errors()).toMatch(/^Unknown command: frobnicate\n\nUsage: hub \[--help\]/);
  });

  // The documented form from the checkout: npm runs the project's own `bin` (dist/src/cli.js, which
  // `npm ci` builds). `npx hub` outside the checkout would look for a package named hub on the registry.
  it("`npx hub …` runs the built hub: its help and each command's", async () => {
    expect(fs.existsSync(path.join(ROOT, 'dist/src/cli.js'))).toBe(true);
    expect(fs.readFileSync(path.join(ROOT, 'dist/src/cli.js'), 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
    for (const [words, usage] of commands) {
      const result = await run('npx', ['hub', ...words, '--help']);
      expect(result.code, `npx hub ${words.join(' ')} --help: ${result.stderr}`).toBe(0);
      expect(result.stdout).toMatch(usage);
    }
    const version = await run('npx', ['hub', '--version']);
    expect(version.stdout.trim()).toBe(
      (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version,
    );
  });
});

describe('errors that name the cause and the path', () => {
  it('HUB_DATA_DIR naming a file, or a path through one, is said so', async () => {
    const dir = scratch();
    const file = path.join(dir, 'not-a-directory');
    fs.writeFileSync(file, 'mine');
    const start = runCli([], { HUB_DATA_DIR: file });
    expect(await start.exited).toBe(1);
    expect(start.errors()).toBe(
      `hub did not start: the data directory ${file} is a file, not a directory: set HUB_DATA_DIR to a directory\n`,
    );
    const through = runCli([], { HUB_DATA_DIR: path.join(file, 'data') });
    expect(await through.exited).toBe(1);
    expect(through.errors()).toMatch(
      new RegExp(
        `^hub did not start: cannot (use|create) the data directory ${path.join(file, 'data')} \\(HUB_DATA_DIR\\): ENOTDIR`,
      ),
    );
    expect(fs.readFileSync(file, 'utf8')).toBe('mine');
  });

  it('`hub migrate` with a mistyped HUB_DATA_DIR names it and creates nothing', async () => {
    const dir = scratch();
    const typo = path.join(dir, 'dtaa');
    const env = { HUB_DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/never_reached' };
    const missing = runCli(['migrate'], { ...env, HUB_DATA_DIR: typo });
    expect(await missing.exited).toBe(1);
    expect(missing.errors()).toBe(
      `hub migrate: no data directory ${typo} (HUB_DATA_DIR): set HUB_DATA_DIR to the directory holding hub.db\n`,
    );
    expect(fs.readdirSync(dir)).toEqual([]);
    const empty = path.join(dir, 'empty');
    fs.mkdirSync(empty);
    const noDatabase = runCli(['migrate'], { ...env, HUB_DATA_DIR: empty });
    expect(await noDatabase.exited).toBe(1);
    expect(noDatabase.errors()).toMatch(new RegExp(`^hub migrate: no hub.db in ${empty} \\(HUB_DATA_DIR\\)`));
    expect(fs.readdirSync(empty)).toEqual([]);
    const noUrl = runCli(['migrate'], { HUB_DATA_DIR: empty });
    expect(await noUrl.exited).toBe(1);
    expect(noUrl.errors()).toMatch(/^hub migrate: needs HUB_DATABASE_URL/);
    const badEnv = runCli(['migrate'], { ...env, HUB_SYNC: 'sometimes' });
    expect(await badEnv.exited).toBe(1);
    expect(badEnv.errors()).toMatch(/^hub migrate: Invalid environment variable HUB_SYNC/);
  });
});

describe('Ctrl-C on `npm start`', () => {
  // A terminal's Ctrl-C signals the whole foreground process group: npm, the script's shell and the hub.
  // The script execs the hub (no shell left for the signal to kill), so npm reports the hub's exit: 0.
  it('the hub logs "stopping" and "stopped", and npm exits 0', async () => {
    const dataDir = path.join(scratch(), 'data');
    const npm = spawn('npm', ['start'], {
      cwd: ROOT,
      detached: true,
      env: { ...process.env, HUB_DATA_DIR: dataDir, HUB_PORT: '0', HUB_HOST: '127.0.0.1', HUB_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    npm.stdout.on('data', (c: Buffer) => (out += c.toString()));
    npm.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) =>
      npm.on('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))),
    );
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setInterval(() => {
          if (/hub listening on/.test(out)) {
            clearInterval(timer);
            resolve();
          }
        }, 50);
        void exited.then(() => {
          clearInterval(timer);
          reject(new Error(`npm start exited: ${out}`));
        });
      });
      process.kill(-(npm.pid as number), 'SIGINT');
      expect(await exited).toBe(0);
    } finally {
      try {
        process.kill(-(npm.pid as number), 'SIGKILL');
      } catch {
        // already gone
      }
    }
    expect(out).toMatch(/"msg":"stopping"/);
    expect(out).toMatch(/"msg":"stopped"/);
    expect(out).not.toMatch(/npm error/);
  }, 180_000); // npm start builds first when the sources are newer than dist/
});
