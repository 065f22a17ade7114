/**
 * The hub as an operator runs it: --help and --version start nothing, one hub per data directory,
 * private file modes, SIGHUP reloads, failed authentications in the log, and a database that gives
 * space back.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { serializeConfiguration } from '../src/config/xmlFile.js';
import { startHub } from '../src/createHub.js';
import { DataDirectoryInUse } from '../src/dataDirectory.js';
import { hubOptions } from '../src/settings.js';
import { sqliteDatabaseOf } from '../src/store/index.js';
import { runCli } from './support/hubCli.js';
import {
  admin,
  get,
  hubsStoppedAfterEach,
  pkg,
  startTestHub,
  tempDir,
  testConfiguration,
  writeConfiguration,
} from './support/testHub.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const hub = hubsStoppedAfterEach();

const mode = (file: string) => fs.statSync(file).mode & 0o777;

describe('command line', () => {
  it('--help and --version print and exit 0 without starting a hub or creating ./data', async () => {
    const cwd = tempDir();
    const help = runCli(['--help'], {}, cwd);
    expect(await help.exited).toBe(0);
    expect(help.output()).toMatch(/^Usage: hub/);
    expect(help.output()).toMatch(/SIGHUP reloads/);
    const version = runCli(['--version'], {}, cwd);
    expect(await version.exited).toBe(0);
    expect(version.output().trim()).toBe(
      (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version,
    );
    const unknown = runCli(['--frobnicate'], {}, cwd);
    expect(await unknown.exited).toBe(2);
    expect(unknown.errors()).toMatch(/Unknown option '--frobnicate'/);
    expect(fs.readdirSync(cwd)).toEqual([]);
  });

  it("a second hub on the same data directory exits non-zero naming the first one's pid; a lock left by kill -9 is taken over", async () => {
    const dataDir = tempDir();
    const first = runCli([], { HUB_DATA_DIR: dataDir });
    await first.waitFor(/hub listening on/);
    const second = runCli([], { HUB_DATA_DIR: dataDir });
    expect(await second.exited).toBe(1);
    expect(second.errors()).toContain(`is in use by another hub (pid ${first.proc.pid})`);
    first.proc.kill('SIGKILL');
    await first.exited;
    const third = runCli([], { HUB_DATA_DIR: dataDir });
    await third.waitFor(/hub listening on/);
    third.proc.kill('SIGTERM');
    expect(await third.exited).toBe(0);
  }, 30_000);

  it('SIGHUP reloads the configuration file and never kills the hub; a broken file is logged and ignored', async () => {
    const dataDir = tempDir();
    const config = testConfiguration();
    writeConfiguration(path.join(dataDir, 'hub.config.xml'), config);
    const cli = runCli([], { HUB_DATA_DIR: dataDir, HUB_LOG_LEVEL: 'info' });
    const url = (await cli.waitFor(/hub listening on (http:\/\/\S+)/))[1];
    const late = { SentinelName: 'Consumer', PackageName: 'Late', AccessKey: 'late-key-0001' };
    expect((await get({ url }, 'consumer/CheckAccess', late)).status).toBe(403);
    const withLate = {
      ...config,
      credentials: [...config.credentials, { ...config.credentials[1], name: 'Late', accessKey: 'late-key-0001' }],
    };
    fs.writeFileSync(path.join(dataDir, 'hub.config.xml'), serializeConfiguration(withLate));
    cli.proc.kill('SIGHUP');
    await cli.waitFor(/configuration reloaded/);
    expect((await get({ url }, 'consumer/CheckAccess', late)).status).toBe(200);
    fs.writeFileSync(path.join(dataDir, 'hub.config.xml'), '<not-a-configuration');
    cli.proc.kill('SIGHUP');
    await cli.waitFor(/configuration not reloaded/);
    // One line naming the problem in the file, without a stack trace: an operator mid-edit is no fault.
    const refusal = cli
      .output()
      .split('\n')
      .find((line) => line.includes('configuration not reloaded')) as string;
    expect(JSON.parse(refusal)).toMatchObject({
      level: 50,
      reason: expect.stringMatching(/well-formed|not-a-configuration/),
    });
    expect(JSON.parse(refusal)).not.toHaveProperty('err');
    expect(refusal).not.toMatch(/"stack"|\\n {4}at /);
    expect((await get({ url }, 'consumer/CheckAccess', late)).status).toBe(200);
    expect(cli.proc.exitCode).toBeNull();
    cli.proc.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
  }, 30_000);
});

describe('the data directory', () => {
  it('refuses a second hub in the same process with DataDirectoryInUse, and frees the directory on stop', async () => {
    const first = await startTestHub();
    await expect(startHub(first.options)).rejects.toThrow(DataDirectoryInUse);
    await expect(startHub(first.options)).rejects.toThrow(`pid ${process.pid}`);
    await first.stop();
    const again = await hub({ dataDir: first.dataDir });
    expect((await get(again, 'management/CheckAccess', admin)).status).toBe(200);
  });

  it('creates hub.db, -wal and -shm 0600 and its directories 0700, and fixes older 0644/0755 ones', async () => {
    const chosen = tempDir();
    fs.chmodSync(chosen, 0o755);
    const dataDir = path.join(chosen, 'data');
    const h = await hub({ dataDir, options: { configPath: path.join(chosen, 'hub.config.xml') } });
    expect((await get(h, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'X', value: 1 })).status).toBe(204);
    for (const file of ['hub.db', 'hub.db-wal', 'hub.db-shm']) expect(mode(path.join(dataDir, file)), file).toBe(0o600);
    for (const dir of ['.', 'repository', 'tmp']) expect(mode(path.join(dataDir, dir)), dir).toBe(0o700);
    await h.stop();
    // A directory the user chose and the hub did not create keeps its mode; what is in it is private.
    const inChosen = await hub({ dataDir: chosen });
    expect(mode(chosen)).toBe(0o755);
    expect(mode(path.join(chosen, 'hub.db'))).toBe(0o600);
    await inChosen.stop();
    await h.stop();
    fs.chmodSync(path.join(dataDir, 'hub.db'), 0o644);
    fs.chmodSync(path.join(dataDir, 'repository'), 0o755);
    const again = await hub({ dataDir });
    expect(mode(path.join(dataDir, 'hub.db'))).toBe(0o600);
    expect(mode(path.join(dataDir, 'repository'))).toBe(0o700);
    await again.stop();
  });
});

describe('logs', () => {
  it('logs each failed authentication once at warn with address and names, never the key', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean))
          lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const dataDir = tempDir();
    writeConfiguration(path.join(dataDir, 'hub.config.xml'));
    const h = await startHub(
      hubOptions({ dataDir, host: '127.0.0.1', port: 0, authFailureDelayMs: 0 }),
      pino({ level: 'warn' }, sink),
    );
    try {
      expect(
        (await get(h, 'platform/CheckAccess', { SentinelName: 'S1', PackageName: 'P1', AccessKey: 'secret-guess-42' }))
          .status,
      ).toBe(403);
      expect(
        (
          await get(h, 'consumer/CheckAccess', {
            SentinelName: 'Consumer',
            PackageName: 'App',
            AccessKey: 'another-guess-43',
          })
        ).status,
      ).toBe(403);
    } finally {
      await h.stop();
    }
    const failures = lines.filter((l) => l.msg === 'authentication failed');
    expect(failures).toHaveLength(2);
    expect(failures[0]).toMatchObject({
      level: 40,
      ip: expect.stringMatching(/127\.0\.0\.1/),
      sentinelName: 'S1',
      packageName: 'P1',
      interfaceName: 'platform',
    });
    expect(failures[1]).toMatchObject({ level: 40, sentinelName: 'Consumer', packageName: 'App' });
    expect(JSON.stringify(lines)).not.toMatch(/guess/);
  });
});

describe('space given back', () => {
  it('free pages go back to the file system by the periodic incremental vacuum; an older database is switched once at start', async () => {
    const dataDir = tempDir();
    // An "older" database: created without auto_vacuum, as hubs before this change did.
    const old = new Database(path.join(dataDir, 'hub.db'));
    old.exec('create table leftover (x); insert into leftover values (1)');
    old.close();
    const h = await hub({ dataDir, options: { vacuumIntervalMs: 1000 } });
    const { sqlite, switchedToIncrementalVacuum } = sqliteDatabaseOf(h.store)!;
    expect(switchedToIncrementalVacuum).toBe(true);
    expect(sqlite.pragma('auto_vacuum', { simple: true })).toBe(2);
    expect(sqlite.pragma('journal_size_limit', { simple: true })).toBe(16 * 1024 * 1024);
    for (let i = 0; i < 50; i++) {
      expect(
        (
          await get(h, 'platform/PushStateObject', pkg('S1', 'P1'), {
            name: `Big${i}`,
            value: `"${'x'.repeat(4000)}${i}"`,
          })
        ).status,
      ).toBe(204);
    }
    expect((await get(h, 'platform/PurgeStateObjects', pkg('S1', 'P1'), { name: 'Big*' })).status).toBe(204);
    // Whatever the store keeps after a purge, space freed by deletes must reach the file system:
    // a table of 5 MB dropped leaves its pages free until the vacuum gives them back.
    sqlite.exec(
      'create table scratch (x); with recursive n(i) as (select 1 union all select i + 1 from n where i < 1250) insert into scratch select randomblob(4000) from n',
    );
    sqlite.exec('drop table scratch');
    sqlite.pragma('wal_checkpoint(TRUNCATE)');
    const pageSize = sqlite.pragma('page_size', { simple: true }) as number;
    const pagesBefore = sqlite.pragma('page_count', { simple: true }) as number;
    expect(sqlite.pragma('freelist_count', { simple: true })).toBeGreaterThan(1000);
    expect(fs.statSync(path.join(dataDir, 'hub.db')).size).toBe(pagesBefore * pageSize);
    await expect
      .poll(() => sqlite.pragma('freelist_count', { simple: true }), { timeout: 15_000, interval: 200 })
      .toBe(0);
    const pagesAfter = sqlite.pragma('page_count', { simple: true }) as number;
    expect(pagesAfter).toBeLessThan(pagesBefore - 1000);
    // hub.db itself shrinks without any further write or checkpoint from outside: an idle hub after a
    // purge gives the space back on disk, not only inside the WAL.
    await expect
      .poll(() => fs.statSync(path.join(dataDir, 'hub.db')).size, { timeout: 15_000, interval: 200 })
      .toBe(pagesAfter * pageSize);
  }, 30_000);
});
