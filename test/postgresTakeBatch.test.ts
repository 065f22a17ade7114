/**
 * Polls' StateObject takes on PostgreSQL in one round trip per batch (stateObjectTakeBatch.ts,
 * takeBatch.ts, issue 22 fan-out), on the machine's PostgreSQL: a claimed take with no delivery pending
 * sends one query string and delivers what the transaction of stateObjectTake.ts would (each object
 * once across filters, the oldest `limit`, pending under its claim); one that finds a delivery pending
 * judges it as before; the takes of one turn share one query string; two takes of one subscription at
 * once (one process or two) deliver each change once; a batch's serialization failure fails no take.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { HubStore } from '../src/hub/ports/hubStore.js';
import { createPool } from '../src/store/postgres/connections/pool.js';
import { PostgresStateObjectStore } from '../src/store/postgres/ports/stateObjects.js';
import type { TestClaim } from './support/storeTakes.js';
import { claim, consumerApp, patterns, shownTo, signal, write } from './support/storeTakes.js';
import { blockedConnections, openTestHubStore, postgresServer, testDatabase } from './support/postgres.js';
import type { TestDatabase } from './support/postgres.js';

const server = await postgresServer();
const log = { warn: () => {} };

describe.skipIf(!server.available)('PostgreSQL: StateObject takes in one round trip per batch', () => {
  let database: TestDatabase;
  let hub: HubStore;
  let pool: pg.Pool;
  let store: PostgresStateObjectStore;
  /** Query strings sent on `pool`'s connections, the one PREPARE of each connection left out. */
  let sent = 0;
  let subscription: string;
  let owner: { connectionId: string; credentialName: string };

  beforeAll(async () => {
    database = await testDatabase(server);
    hub = await openTestHubStore(database.url, { messageRetention: { count: 1_000, ms: 60_000 } });
    pool = createPool({ url: database.url, role: 'store', sync: 'full', lockWaitMs: 5_000, log, max: 2 });
    pool.on('connect', (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      client.query = ((...args: unknown[]) => {
        if (!(typeof args[0] === 'string' && args[0].startsWith('prepare '))) sent += 1;
        return query(...args);
      }) as typeof client.query;
    });
    store = new PostgresStateObjectStore({ pool, log });
    const connectionId = await hub.callers.record(consumerApp());
    owner = { connectionId, credentialName: 'cred' };
    subscription = (await hub.subscriptions.openStateObjects(owner, undefined, patterns('A'))).id;
    await hub.subscriptions.openStateObjects(owner, subscription, patterns('*'));
  });
  afterAll(async () => {
    await pool?.end();
    await hub?.close();
    await database?.drop();
  });

  /** The take's objects as [name, value], and how many query strings it sent. */
  async function take(limit: number, by: TestClaim) {
    const before = sent;
    const objects = shownTo(by, await store.take(subscription, limit, signal(), by)).objects.map((o) => [
      o.name,
      o.current?.value,
    ]);
    return { objects, trips: sent - before };
  }

  it('with no delivery pending, one query string; a pending delivery is judged as before', async () => {
    for (const [name, value] of [
      ['A', 1],
      ['B', 2],
      ['C', 3],
    ] as const)
      await hub.stateObjects.push(write(name, value));
    // A matches both filters and comes once; the limit leaves C for later.
    expect(await take(2, claim('t1'))).toEqual({
      objects: [
        ['A', '1'],
        ['B', '2'],
      ],
      trips: 1,
    });
    const waiting = claim('t2', 'wait');
    const judged = await take(0, waiting);
    expect(judged.objects).toEqual([]);
    expect(judged.trips).toBeGreaterThan(1);
    expect(waiting.shown.map((p) => p.token)).toEqual(['t1']);
    await hub.subscriptions.settle(subscription, 't1', true);
    expect(await take(0, claim('t3'))).toEqual({ objects: [['C', '3']], trips: 1 });
    // Not written: put back, read again, in one query string again once settled.
    await hub.subscriptions.settle(subscription, 't3', false);
    expect(await take(0, claim('t4'))).toEqual({ objects: [['C', '3']], trips: 1 });
    await hub.subscriptions.settle(subscription, 't4', true);
    expect(await take(0, claim('t5'))).toEqual({ objects: [], trips: 1 });
  });

  it('two takes of one subscription at once deliver each change once', async () => {
    for (let round = 0; round < 10; round++) {
      await hub.stateObjects.push(write('D', round));
      const first = claim(`x${round}`);
      const second = claim(`y${round}`);
      const [a, b] = await Promise.all([take(0, first), take(0, second)]);
      expect([...a.objects, ...b.objects]).toEqual([['D', String(round)]]);
      await hub.subscriptions.settle(subscription, a.objects.length > 0 ? first.token : second.token, true);
    }
  });

  /** `count` subscriptions of filter `name` (a pattern: by LIKE; or exact), opened now (above every change so far). */
  async function subscriptions(count: number, name: string): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++)
      ids.push((await hub.subscriptions.openStateObjects(owner, undefined, patterns(name))).id);
    return ids;
  }

  it('the takes of one turn share one query string, each as it would alone', async () => {
    const exact = await subscriptions(3, 'F1');
    const like = await subscriptions(3, 'F*');
    const waiting = (await subscriptions(1, 'F*'))[0];
    await hub.stateObjects.push(write('F1', 1));
    await hub.stateObjects.push(write('F2', 2));
    // One take leaves a delivery pending on `waiting`: its next take is judged on the single path.
    await store.take(waiting, 0, signal(), claim('w1'));
    const judge = claim('w2', 'wait');
    const before = sent;
    const taken = await Promise.all([
      ...[...exact, ...like].map((id, i) => store.take(id, i % 2, signal(), claim(`f${i}`))),
      store.take(waiting, 0, signal(), judge).then((t) => shownTo(judge, t)),
    ]);
    // Exact and LIKE filters; limits 0 (all) and 1 by turns.
    const names = taken.map(({ objects }) => objects.map((o) => `${o.name}=${o.current?.value}`));
    expect(names).toEqual([['F1=1'], ['F1=1'], ['F1=1'], ['F1=1'], ['F1=1', 'F2=2'], ['F1=1'], []]);
    expect(judge.shown.map((p) => p.token)).toEqual(['w1']);
    // The batch in one, the judged take on its own (several).
    expect(sent - before).toBeGreaterThan(1);
    for (const [i, id] of exact.entries()) await hub.subscriptions.settle(id, `f${i}`, true);
    await hub.stateObjects.push(write('F1', 3));
    const again = sent;
    const next = await Promise.all(exact.map((id, i) => store.take(id, 0, signal(), claim(`g${i}`))));
    expect(sent - again).toBe(1);
    // Each delivery is pending under its own claim: the next take of each is judged.
    expect(next.map(({ objects }) => objects.map((o) => o.current?.value))).toEqual([['3'], ['3'], ['3']]);
    const judged = exact.map(() => claim('h', 'delivered'));
    await Promise.all(exact.map((id, i) => store.take(id, 0, signal(), judged[i]).then((t) => shownTo(judged[i], t))));
    expect(judged.map((c) => c.shown.map((p) => p.token))).toEqual([['g0'], ['g1'], ['g2']]);
  });

  it('a batch that meets a concurrent change of one of its subscriptions fails none of its takes', async () => {
    const [contested, ...others] = await subscriptions(3, 'G');
    await hub.stateObjects.push(write('G', 1));
    const blocker = await pool.connect();
    try {
      // Holds the contested filter's row: the batch, its snapshot taken, waits for it and then fails (40001).
      await blocker.query('begin');
      await blocker.query('update state_object_filters set read_seq = read_seq where subscription_id = $1', [
        contested,
      ]);
      const takes = Promise.all([contested, ...others].map((id, i) => store.take(id, 0, signal(), claim(`c${i}`))));
      await expect.poll(() => blockedConnections(database.url)).toBeGreaterThan(0);
      await blocker.query('commit');
      expect((await takes).map(({ objects }) => objects.map((o) => o.current?.value))).toEqual([['1'], ['1'], ['1']]);
    } finally {
      blocker.release();
    }
  });

  it('two processes taking one subscription at once in their batches deliver each change once', async () => {
    const otherPool = createPool({ url: database.url, role: 'store', sync: 'full', lockWaitMs: 5_000, log, max: 2 });
    const elsewhere = new PostgresStateObjectStore({ pool: otherPool, log });
    const [shared, ...own] = await subscriptions(5, 'H');
    try {
      for (let round = 0; round < 10; round++) {
        await hub.stateObjects.push(write('H', round));
        const here = claim(`p${round}`);
        const there = claim(`q${round}`);
        const [a, b, ...rest] = await Promise.all([
          store.take(shared, 0, signal(), here),
          elsewhere.take(shared, 0, signal(), there),
          ...own.map((id, i) => (i % 2 ? store : elsewhere).take(id, 0, signal(), claim(`r${round}.${i}`))),
        ]);
        expect([...a.objects, ...b.objects].map((o) => o.current?.value)).toEqual([String(round)]);
        expect(rest.map(({ objects }) => objects.map((o) => o.current?.value))).toEqual(own.map(() => [String(round)]));
        await hub.subscriptions.settle(shared, a.objects.length > 0 ? here.token : there.token, true);
        for (const [i, id] of own.entries()) await hub.subscriptions.settle(id, `r${round}.${i}`, true);
      }
    } finally {
      await otherPool.end();
    }
  });
});
