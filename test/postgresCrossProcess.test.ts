/**
 * A poll waiting on one hub process is woken by a write committed through another (issue 22), at the
 * store and notifier level: two PostgreSQL engines on one database stand for processes A and B; B has
 * the in-memory Notifier the hub uses and the cross-process feed (LISTEN + tail reader). Nothing on B
 * announces A's writes but the feed.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Notifier } from '../src/hub/polls/notifier.js';
import type { HubStore } from '../src/hub/ports/hubStore.js';
import type { CrossProcessWakeUps } from '../src/store/postgres/feed/crossProcess.js';
import { startCrossProcessWakeUps } from '../src/store/postgres/feed/crossProcess.js';
import { openTestHubStore, postgresServer, testDatabase, testPool } from './support/postgres.js';
import type { TestDatabase } from './support/postgres.js';
import { until } from './support/until.js';

const server = await postgresServer();

describe.skipIf(!server.available)('wake-ups across processes on PostgreSQL', () => {
  let database: TestDatabase;
  let a: HubStore;
  let b: HubStore;
  let feed: CrossProcessWakeUps;
  const notifierB = new Notifier();
  const log = { warn: () => {} };

  beforeAll(async () => {
    database = await testDatabase(server);
    [a, b] = await Promise.all([openTestHubStore(database.url), openTestHubStore(database.url)]);
    // The fallback timer is off (an hour): only a notification wakes B here.
    feed = await startCrossProcessWakeUps({
      url: database.url,
      sync: 'full',
      lockWaitMs: 5_000,
      log,
      announce: notifierB,
      fallbackMs: 3_600_000,
    });
  });
  afterAll(async () => {
    await feed?.stop();
    await a?.close();
    await b?.close();
    await database?.drop();
  });

  const owner = async () => {
    const connectionId = await b.callers.record({
      connectionId: randomUUID(),
      friendlyName: `Consumer/${randomUUID()}`,
      kind: 'consumer',
      sentinelName: 'Consumer',
      packageName: 'App',
      firstSeenMs: 1,
    });
    return { connectionId, credentialName: 'cred' };
  };

  it('a StateObject poll waiting on B is woken by a push committed on A, and reads it', async () => {
    const me = await owner();
    const { id } = await b.subscriptions.openStateObjects(me, undefined, {
      sentinel: '*',
      package: '*',
      name: 'Temperature',
      type: '*',
    });
    const interest = await b.subscriptions.findOwned(me, id, 'state_objects');
    const signal = new AbortController().signal;
    expect((await b.stateObjects.take(id, 0, signal)).objects).toEqual([]);
    const waiter = notifierB.register(id, interest!);
    const outcome = waiter.wait(30_000, signal);
    await a.stateObjects.push({
      sentinelName: 'S',
      packageName: 'P',
      name: 'Other',
      type: 'T',
      value: '0',
      metadatas: '{}',
      lastUpdateMs: 1,
      lifetimeS: 0,
      expiresAtMs: null,
    });
    await a.stateObjects.push({
      sentinelName: 'S',
      packageName: 'P',
      name: 'Temperature',
      type: 'T',
      value: '21',
      metadatas: '{}',
      lastUpdateMs: 1,
      lifetimeS: 0,
      expiresAtMs: null,
    });
    expect(await outcome).toBe('woken');
    notifierB.release(id, waiter);
    expect((await b.stateObjects.take(id, 0, signal)).objects.map((c) => [c.name, c.current?.value])).toEqual([
      ['Temperature', '21'],
    ]);
  });

  it('a message poll waiting on B is woken by a send on A addressed to it, not by one addressed elsewhere', async () => {
    const me = await owner();
    const { id } = await b.subscriptions.openMessages(me, undefined);
    const interest = await b.subscriptions.findOwned(me, id, 'messages');
    const signal = new AbortController().signal;
    const waiter = notifierB.register(id, interest!);
    let settled = false;
    const outcome = waiter.wait(30_000, signal).finally(() => (settled = true));
    const send = (scope: number, args: string[]) =>
      a.messages.send({
        senderConnectionId: randomUUID(),
        senderType: 0,
        senderFriendlyName: 'Consumer/Other',
        scope,
        args: JSON.stringify(args),
        sagaId: null,
        key: 'K',
        data: JSON.stringify(args),
        sentMs: 1,
      });
    await send(3, ['ElsewhereSentinel']);
    await feed.tail.hint(); // read and announced: it woke nobody
    expect(settled).toBe(false);
    await send(2, [me.connectionId]);
    expect(await outcome).toBe('woken');
    notifierB.release(id, waiter);
    expect((await b.messages.take(id, 0, signal)).messages.map((m) => m.data)).toEqual([
      JSON.stringify([me.connectionId]),
    ]);
  });

  it("with no poll waiting on B, A's doorbell moves B's cursor to A's head without a read; a poll registered after it reads the push itself", async () => {
    expect(notifierB.waitingCount).toBe(0);
    await until(() => feed.tail.cursors !== undefined);
    const reads = feed.tail.reads;
    await a.stateObjects.push({
      sentinelName: 'S',
      packageName: 'P',
      name: 'Unwatched',
      type: 'T',
      value: '1',
      metadatas: '{}',
      lastUpdateMs: 1,
      lifetimeS: 0,
      expiresAtMs: null,
    });
    const db = testPool(database.url, 1);
    const { rows } = await db.query<{ seq: number }>("select seq from state_objects where name = 'Unwatched'");
    await db.end();
    await until(() => feed.tail.cursors?.state_objects === rows[0].seq);
    expect(feed.tail.reads).toBe(reads);
    const me = await owner();
    const { id } = await b.subscriptions.openStateObjects(me, undefined, {
      sentinel: '*',
      package: '*',
      name: 'Unwatched',
      type: '*',
    });
    const waiter = notifierB.register(id, (await b.subscriptions.findOwned(me, id, 'state_objects'))!);
    const signal = new AbortController().signal;
    expect((await b.stateObjects.take(id, 0, signal)).objects.map((c) => [c.name, c.current?.value])).toEqual([
      ['Unwatched', '1'],
    ]);
    notifierB.release(id, waiter);
  });
});
