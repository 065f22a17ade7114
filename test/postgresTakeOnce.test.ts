/**
 * A poll's StateObject take on PostgreSQL in one round trip (stateObjectTakeOnce.ts, issue 22 fan-out),
 * on the machine's PostgreSQL: a claimed take with no delivery pending sends one query string and
 * delivers what the transaction of stateObjectTake.ts would (each object once across filters, the
 * oldest `limit`, pending under its claim); one that finds a delivery pending judges it as before; two
 * takes of one subscription at once deliver each change once.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import type { HubStore } from '../src/hub/ports/hubStore.js';
import type { DeliveryClaim } from '../src/hub/ports/subscriptions.js';
import { createPool } from '../src/store/postgres/pool.js';
import { PostgresStateObjectStore } from '../src/store/postgres/stateObjects.js';
import { claim, patterns, signal, write } from './support/storeTakes.js';
import { openTestHubStore, postgresServer, testDatabase } from './support/postgres.js';
import type { TestDatabase } from './support/postgres.js';

const server = await postgresServer();
const log = { warn: () => {} };

describe.skipIf(!server.available)('PostgreSQL: a StateObject take in one round trip', () => {
  let database: TestDatabase;
  let hub: HubStore;
  let pool: pg.Pool;
  let store: PostgresStateObjectStore;
  /** Query strings sent on `pool`'s connections, the one PREPARE of each connection left out. */
  let sent = 0;
  let subscription: string;

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
    const connectionId = await hub.callers.record({
      connectionId: randomUUID(),
      friendlyName: 'Consumer/App',
      kind: 'consumer',
      sentinelName: 'Consumer',
      packageName: 'App',
      firstSeenMs: 1,
    });
    const owner = { connectionId, credentialName: 'cred' };
    subscription = (await hub.subscriptions.openStateObjects(owner, undefined, patterns('A'))).id;
    await hub.subscriptions.openStateObjects(owner, subscription, patterns('*'));
  });
  afterAll(async () => {
    await pool?.end();
    await hub?.close();
    await database?.drop();
  });

  /** The take's objects as [name, value], and how many query strings it sent. */
  async function take(limit: number, by: DeliveryClaim) {
    const before = sent;
    const objects = (await store.take(subscription, limit, signal(), by)).map((o) => [o.name, o.current?.value]);
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
});
