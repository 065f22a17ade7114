/**
 * Wake-ups across processes on PostgreSQL (issue 22): the listening connection and the tail reader,
 * on the machine's PostgreSQL in a database of this file's own. "Another process" is a second pool
 * writing and ringing the doorbell; nothing here waits for a time to pass: each test waits for what it
 * expects (the test's timeout is the bound).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import pg from 'pg';
import { applicationName, createPool, openPostgres } from '../src/store/postgres/connections/pool.js';
import type { PostgresLog } from '../src/store/postgres/connections/pool.js';
import { migratePostgres } from '../src/store/postgres/connections/migrate.js';
import { appendMessages, appendPackageLogs, upsertStateObjects } from '../src/store/postgres/connections/logs.js';
import { notifyCommitted, PostgresListener } from '../src/store/postgres/feed/listener.js';
import { TailReader } from '../src/store/postgres/feed/tailReader.js';
import type { ChangedStateObjectKey, PackageLogKey, SentMessageKey } from '../src/store/postgres/feed/tailReader.js';
import { messageRow, postgresServer, stateObjectRow, testClient, testDatabase } from './support/postgres.js';
import type { TestDatabase } from './support/postgres.js';
import { until } from './support/until.js';

const server = await postgresServer();

describe.skipIf(!server.available)('PostgreSQL listener and tail reader', () => {
  let database: TestDatabase;
  /** "Process A": writes and rings. */
  let writer: pg.Pool;
  const warnings: { object: object; message: string }[] = [];
  const log: PostgresLog = { warn: (object, message) => warnings.push({ object, message }) };
  const stops: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    database = await testDatabase(server);
    const { db } = openPostgres({ url: database.url, role: 'migrate', sync: 'full', lockWaitMs: 10_000, log });
    await migratePostgres(db).finally(() => db.destroy());
    writer = createPool({ url: database.url, role: 'writer', sync: 'full', lockWaitMs: 10_000, log });
  });
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });
  afterAll(async () => {
    await writer?.end();
    await database?.drop();
  });

  /** "Process B": a listener feeding a tail reader that records what it is handed. */
  async function processB(
    options: {
      fallbackMs?: number;
      firstBackoffMs?: number;
      heartbeatMs?: number;
      heartbeatTimeoutMs?: number;
      role?: string;
      listenUrl?: string;
    } = {},
  ) {
    const seen = {
      stateObjects: [] as ChangedStateObjectKey[],
      messages: [] as SentMessageKey[],
      packageLogs: [] as PackageLogKey[],
    };
    const hints: string[] = [];
    const pool = createPool({ url: database.url, role: 'tail', sync: 'full', lockWaitMs: 10_000, log, max: 2 });
    const tail = new TailReader({
      db: pool,
      log,
      fallbackMs: options.fallbackMs ?? 3_600_000,
      handlers: {
        stateObjects: (rows) => seen.stateObjects.push(...rows),
        messages: (rows) => seen.messages.push(...rows),
        packageLogs: (rows) => seen.packageLogs.push(...rows),
      },
    });
    await tail.start();
    let readies = 0;
    const listener = new PostgresListener({
      url: options.listenUrl ?? database.url,
      role: options.role ?? 'listen',
      sync: 'full',
      lockWaitMs: 10_000,
      log,
      firstBackoffMs: options.firstBackoffMs ?? 50,
      heartbeatMs: options.heartbeatMs,
      heartbeatTimeoutMs: options.heartbeatTimeoutMs,
      channels: {
        hub: (payload) => {
          hints.push(payload);
          void tail.hint();
        },
      },
      onReady: () => {
        readies += 1;
        void tail.hint();
      },
    });
    await listener.start();
    await tail.hint(); // the first read (onReady's) is over: what the test writes next is news
    stops.push(async () => {
      await listener.stop();
      await tail.stop();
      await pool.end();
    });
    return { seen, hints, tail, listener, readies: () => readies };
  }

  it('a NOTIFY after a commit makes the other process read the new rows of each log, in order, once', async () => {
    const b = await processB();
    const ids = await appendMessages(writer, [messageRow('a'), messageRow('b')]);
    const [seq] = await upsertStateObjects(writer, [stateObjectRow('T')]);
    const [logId] = await appendPackageLogs(writer, [
      { sentinel_name: 'S', package_name: 'P', level: 'Info', message: 'hello', logged_ms: 1 },
    ]);
    await notifyCommitted(writer, '{"m":1}');
    await until(
      () => b.seen.messages.length === 2 && b.seen.stateObjects.length === 1 && b.seen.packageLogs.length === 1,
    );
    expect(b.hints).toContain('{"m":1}');
    expect(b.seen.messages).toEqual([
      { id: ids[0], sender_connection_id: 'c1', scope: 1, args: '["All"]' },
      { id: ids[1], sender_connection_id: 'c1', scope: 1, args: '["All"]' },
    ]);
    expect(b.seen.stateObjects).toEqual([
      {
        seq,
        sentinel_name: 'S',
        package_name: 'P',
        name: 'T',
        type: 'System.Int32',
        is_deleted: false,
        expires_at_ms: null,
      },
    ]);
    expect(b.seen.packageLogs).toEqual([{ id: logId, sentinel_name: 'S', package_name: 'P' }]);
    // A later hint with nothing new hands nothing again.
    await b.tail.hint();
    expect(b.seen.messages).toHaveLength(2);
  });

  it('the fallback timer reads a commit whose notification never came', async () => {
    const b = await processB({ fallbackMs: 100 });
    const [id] = await appendMessages(writer, [messageRow('silent')]); // no NOTIFY
    await until(() => b.seen.messages.length === 1);
    expect(b.seen.messages[0].id).toBe(id);
    expect(b.hints).toEqual([]);
    expect(b.tail.cursors?.messages).toBe(id);
  });

  it('a listening connection killed with pg_terminate_backend comes back, and a write committed while it was gone is read', async () => {
    const b = await processB({ role: 'listen-kill', firstBackoffMs: 50 });
    const admin = testClient(database.url);
    await admin.connect();
    // ALTER DATABASE … allow_connections runs from another database.
    const outside = testClient(server.adminUrl);
    await outside.connect();
    const allowConnections = (allow: boolean) =>
      outside.query(`alter database ${database.name} allow_connections ${allow}`);
    const warningsBefore = warnings.length;
    try {
      // While the database refuses new connections, the listener cannot come back: the write below is
      // committed, and announced, in the gap for certain. (Connections already open, admin's and the
      // writer pool's, keep working.)
      await writer.query('select 1');
      await allowConnections(false);
      const killed = await admin.query(
        'select pg_terminate_backend(pid) as killed from pg_stat_activity where application_name = $1',
        [applicationName('listen-kill')],
      );
      expect(killed.rows).toEqual([{ killed: true }]);
      await until(() => !b.listener.connected);
      const [id] = await appendMessages(admin, [messageRow('in the gap')]);
      await notifyCommitted(admin, 'nobody hears this one');
      expect(b.seen.messages).toEqual([]);
      // It tried, and was refused.
      await until(() => warnings.slice(warningsBefore).some((w) => /listening connection failed/.test(w.message)));
      await allowConnections(true);

      await until(() => b.seen.messages.length === 1);
      expect(b.seen.messages[0].id).toBe(id);
      expect(b.hints).not.toContain('nobody hears this one');
      expect(b.listener.reconnects).toBe(1);
      expect(b.listener.connected).toBe(true);
      expect(b.readies()).toBe(2);
      // And it hears again.
      const [next] = await appendMessages(writer, [messageRow('after')]);
      await notifyCommitted(writer, 'heard');
      await until(() => b.seen.messages.length === 2);
      expect(b.seen.messages[1].id).toBe(next);
      expect(b.hints).toContain('heard');
    } finally {
      await allowConnections(true);
      await outside.end();
      await admin.end();
    }
  });

  it('a channel added after the start is heard, on the live connection and on the one that replaces it', async () => {
    const b = await processB({ role: 'listen-more', firstBackoffMs: 50 });
    const heard: string[] = [];
    await b.listener.listen('hub_other', (payload) => heard.push(payload));
    await notifyCommitted(writer, 'first', 'hub_other');
    await until(() => heard.length === 1);
    const admin = testClient(database.url);
    await admin.connect();
    try {
      await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [
        applicationName('listen-more'),
      ]);
      await until(() => b.listener.reconnects === 1 && b.listener.connected);
    } finally {
      await admin.end();
    }
    await notifyCommitted(writer, 'second', 'hub_other');
    await until(() => heard.length === 2);
    expect(heard).toEqual(['first', 'second']);
    // The doorbell's own channel still goes to its handler, not to the added one.
    expect(b.hints).toEqual([]);
  });

  it('a listening connection that goes silent (no FIN, nothing answered) is found by the heartbeat and replaced; what was committed meanwhile is read', async () => {
    // A TCP proxy in front of PostgreSQL that can stop forwarding on the connections it has, as a
    // dropped network path does; new connections pass.
    const stalled = new Set<net.Socket>();
    const open: net.Socket[] = [];
    const target = new URL(database.url);
    const proxy = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      open.push(client, upstream);
      for (const [from, to] of [
        [client, upstream],
        [upstream, client],
      ]) {
        from.on('data', (chunk) => {
          if (!stalled.has(from)) to.write(chunk);
        });
        from.on('error', () => {});
      }
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const viaProxy = new URL(database.url);
    viaProxy.port = String((proxy.address() as net.AddressInfo).port);
    try {
      const b = await processB({
        role: 'listen-silent',
        heartbeatMs: 200,
        heartbeatTimeoutMs: 1_000,
        listenUrl: viaProxy.toString(),
      });
      for (const socket of open) stalled.add(socket);
      const [id] = await appendMessages(writer, [messageRow('while silent')]);
      await notifyCommitted(writer, 'lost in the silence');
      await until(() => b.seen.messages.length === 1);
      expect(b.seen.messages[0].id).toBe(id);
      expect(b.hints).not.toContain('lost in the silence');
      expect(b.listener.reconnects).toBeGreaterThanOrEqual(1);
      expect(warnings.some((w) => (w.object as { why?: string }).why === 'heartbeat unanswered')).toBe(true);
    } finally {
      for (const socket of open) socket.destroy();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });
});
