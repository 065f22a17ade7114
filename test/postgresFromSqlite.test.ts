/**
 * Moving house (issue 22): a hub used on SQLite is stopped, its hub.db copied into an empty
 * PostgreSQL database (store/copy/fromSqlite.ts), and a hub started on that database with the
 * same data directory carries on where it stopped: cursors, unread messages, numbering, logs.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copySqliteToPostgres } from '../src/store/copy/fromSqlite.js';
import { packageZip, uploadPackages } from './support/packages.js';
import { dataOf, namesAndValues, pollMessages, pollStateObjects } from './support/subscriptions.js';
import { admin, consumer, get, hubsStoppedAfterEach, idOf, pkg } from './support/testHub.js';
import type { TestHub } from './support/testHub.js';
import { postgresServer, testClient, testDatabase } from './support/postgres.js';
import type { TestDatabase } from './support/postgres.js';

const server = await postgresServer();
const log = { warn: () => {} };

describe.skipIf(!server.available)('copying a SQLite hub into PostgreSQL', () => {
  let database: TestDatabase;
  // Each test's hubs stop after it, before the database is dropped.
  const hub = hubsStoppedAfterEach();

  beforeAll(async () => {
    database = await testDatabase(server);
  });
  afterAll(async () => {
    await database?.drop();
  });

  const app = consumer('Mover');
  const p1 = pkg('S1', 'P1');
  const objects = async (h: TestHub, id: string) => namesAndValues(await pollStateObjects(h, app, id));
  const messages = async (h: TestHub, id: string) => dataOf(await pollMessages(h, app, id));
  const archive = packageZip({ Name: 'Thermo', Version: '1' }, { 'bin/payload': crypto.randomBytes(1_500_000) });
  const query = `SentinelName=Management&PackageName=Tests&AccessKey=${admin.AccessKey}`;
  const upload = async (h: TestHub) => (await uploadPackages(h, [{ name: 'thermo.zip', data: archive }])).status;
  const send = (h: TestHub, data: string) =>
    get(h, 'consumer/SendMessage', consumer('Sender'), { scope: 'All', key: 'K', data: JSON.stringify(data) });

  it('keeps cursors, unread messages, numbering and logs, and refuses a database that is not empty', async () => {
    const sqliteHub = await hub();
    const dataDir = sqliteHub.dataDir;
    await get(sqliteHub, 'platform/PushStateObject', p1, { name: 'A', value: 1 });
    await get(sqliteHub, 'platform/PushStateObject', p1, { name: 'B', value: 1 });
    const objectsId = idOf(await get(sqliteHub, 'consumer/SubscribeToStateObjects', app, { name: '[x]*' }));
    const everything = idOf(
      await get(sqliteHub, 'consumer/SubscribeToStateObjects', app, { name: '*', subscriptionId: objectsId }),
    );
    expect(everything).toBe(objectsId);
    expect(await objects(sqliteHub, objectsId)).toEqual([
      ['A', 1],
      ['B', 1],
    ]);
    await get(sqliteHub, 'platform/PurgeStateObjects', p1, { name: 'B' });
    await get(sqliteHub, 'platform/PushStateObject', p1, { name: '[x]y', value: 2 });
    const messagesId = idOf(await get(sqliteHub, 'consumer/SubscribeToMessage', app));
    await send(sqliteHub, 'read before');
    expect(await messages(sqliteHub, messagesId)).toEqual(['read before']);
    await send(sqliteHub, 'unread');
    await get(sqliteHub, 'platform/WriteLog', p1, { message: 'before the move' });
    expect(await upload(sqliteHub)).toBe(200);
    await sqliteHub.stop();

    const report = await copySqliteToPostgres({ sqliteFile: path.join(dataDir, 'hub.db'), url: database.url, log });
    expect(report).toMatchObject({
      state_objects: 3,
      subscriptions: 2,
      state_object_filters: 2,
      messages: 2,
      package_logs: 1,
      repository_packages: 1,
      repository_archives: 1,
    });
    // The archives are in the database now: the folder is not needed any more.
    fs.rmSync(path.join(dataDir, 'repository'), { recursive: true });

    const pgHub = await hub({ dataDir, config: null, options: { databaseUrl: database.url } });
    expect(await objects(pgHub, objectsId)).toEqual([
      ['B', 'deleted'],
      ['[x]y', 2],
    ]);
    expect(await messages(pgHub, messagesId)).toEqual(['unread']);
    await get(pgHub, 'platform/PushStateObject', p1, { name: 'A', value: 3 });
    await send(pgHub, 'after');
    expect(await objects(pgHub, objectsId)).toEqual([['A', 3]]);
    expect(await messages(pgHub, messagesId)).toEqual(['after']);
    await get(pgHub, 'platform/WriteLog', p1, { message: 'after the move' });
    const logs = (await get(pgHub, 'management/logs', admin)).json<{ Message: string; Id: number }[]>();
    expect(logs.map((l) => l.Message)).toEqual(['before the move', 'after the move']);
    expect(logs[1].Id).toBe(logs[0].Id + 1);
    const served = await fetch(`${pgHub.url}/rest/management/packages/Thermo/archive?${query}`);
    expect(Buffer.from(await served.arrayBuffer()).equals(archive)).toBe(true);

    await expect(
      copySqliteToPostgres({ sqliteFile: path.join(dataDir, 'hub.db'), url: database.url, log }),
    ).rejects.toThrow(/not empty/);
  });

  it('refuses a repository archive that is missing or not the one its hash names, changing nothing', async () => {
    const sqliteHub = await hub();
    expect(await upload(sqliteHub)).toBe(200);
    await sqliteHub.stop();
    const target = await testDatabase(server);
    try {
      const [file] = fs.readdirSync(path.join(sqliteHub.dataDir, 'repository'));
      const archivePath = path.join(sqliteHub.dataDir, 'repository', file);
      const copy = () =>
        copySqliteToPostgres({ sqliteFile: path.join(sqliteHub.dataDir, 'hub.db'), url: target.url, log });
      fs.writeFileSync(archivePath, 'tampered');
      await expect(copy()).rejects.toThrow(/'Thermo' does not match its SHA-256/);
      fs.rmSync(archivePath);
      await expect(copy()).rejects.toThrow(/'Thermo' is missing/);
      const client = testClient(target.url);
      await client.connect();
      const counts = await client.query<{ n: number }>(
        'select (select count(*) from repository_packages) + (select count(*) from repository_archives) as n',
      );
      await client.end();
      expect(counts.rows[0].n).toBe(0);
    } finally {
      await target.drop();
    }
  });

  it('`hub migrate` copies the data directory of a stopped hub, and refuses one a hub is running on', async () => {
    const running = await hub();
    await get(running, 'platform/PushStateObject', p1, { name: 'Moved', value: 5 });
    const target = await testDatabase(server);
    const run = (dataDir: string) =>
      promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'migrate'], {
        env: { ...process.env, HUB_DATA_DIR: dataDir, HUB_DATABASE_URL: target.url, HUB_LOG_LEVEL: 'silent' },
      });
    try {
      await expect(run(running.dataDir)).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringMatching(/in use|running/i),
      });
      await running.stop();
      const { stdout } = await run(running.dataDir);
      expect(stdout).toMatch(/^state_objects: 1$/m);
      const client = testClient(target.url);
      await client.connect();
      const { rows } = await client.query('select name, value from state_objects');
      await client.end();
      expect(rows).toEqual([{ name: 'Moved', value: '5' }]);
    } finally {
      await target.drop();
    }
  }, 120_000); // two CLI runs through tsx: on a loaded 2-core box, one alone can take 15 s
});
