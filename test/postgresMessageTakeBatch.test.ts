/**
 * Polls' message takes on PostgreSQL in batches (messageTakeBatch.ts, takeBatch.ts, issue 22's send to
 * All), on the machine's PostgreSQL: the claimed takes of one turn share one transaction of a few round
 * trips, however many they are, and each delivers what it would alone (addressing, limits, groups, the
 * saga requests it delivers), pending under its own claim; a take that finds a delivery pending is
 * judged as before; a batch's serialization failure fails none of its takes; two processes taking one
 * subscription at once deliver each message once.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { HubStore } from '../src/hub/ports/hubStore.js';
import type { NewMessage } from '../src/hub/ports/messages.js';
import { ScopeType } from '../src/hub/scope.js';
import { PostgresMessageStore } from '../src/store/postgres/ports/messages.js';
import { createPool } from '../src/store/postgres/connections/pool.js';
import type { TestClaim } from './support/storeTakes.js';
import { claim, messageFrom, shownTo, signal } from './support/storeTakes.js';
import { blockedConnections, openTestHubStore, postgresServer, testDatabase } from './support/postgres.js';
import type { TestDatabase } from './support/postgres.js';

const server = await postgresServer();
const log = { warn: () => {} };
const retention = { count: 1_000, ms: 60_000 };

describe.skipIf(!server.available)('PostgreSQL: message takes in batches', () => {
  let database: TestDatabase;
  let hub: HubStore;
  let pool: pg.Pool;
  let store: PostgresMessageStore;
  /** Queries sent on `pool`'s connections. */
  let sent = 0;
  let a: { connectionId: string; credentialName: string };
  let b: { connectionId: string; credentialName: string };

  const caller = async (sentinelName: string) => ({
    connectionId: await hub.callers.record({
      connectionId: randomUUID(),
      friendlyName: `${sentinelName}/App`,
      kind: 'consumer',
      sentinelName,
      packageName: 'App',
      firstSeenMs: 1,
    }),
    credentialName: 'cred',
  });
  const message = (data: string, extra: Partial<NewMessage> = {}) =>
    messageFrom({ connectionId: b.connectionId, friendlyName: 'Other/App' })(data, extra);
  const open = async (owner: { connectionId: string; credentialName: string }, count = 1) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) ids.push((await hub.subscriptions.openMessages(owner, undefined)).id);
    return ids;
  };
  const take = async (on: PostgresMessageStore, id: string, limit: number, by: TestClaim) =>
    shownTo(by, await on.take(id, limit, signal(), by)).messages.map((m) => m.data);

  beforeAll(async () => {
    database = await testDatabase(server);
    hub = await openTestHubStore(database.url, { messageRetention: retention });
    pool = createPool({ url: database.url, role: 'store', sync: 'full', lockWaitMs: 5_000, log, max: 2 });
    pool.on('connect', (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      client.query = ((...args: unknown[]) => {
        sent += 1;
        return query(...args);
      }) as typeof client.query;
    });
    store = new PostgresMessageStore({ pool, log, retention });
    a = await caller('Consumer');
    b = await caller('Other');
  });
  afterAll(async () => {
    await pool?.end();
    await hub?.close();
    await database?.drop();
  });

  it('the takes of one turn share one transaction, each as it would alone', async () => {
    const [a1, a2, a3] = await open(a, 3);
    const [b1] = await open(b);
    const [waiting] = await open(a);
    await hub.messages.send(message('m1', { sagaId: 'saga-1' }));
    await hub.subscriptions.openMessages(a, a1, 'G');
    await hub.messages.send(message('m2', { scope: ScopeType.Others, senderConnectionId: a.connectionId }));
    await hub.messages.send(message('m3', { scope: ScopeType.Sentinel, args: '["Consumer"]' }));
    await hub.messages.send(message('m4', { scope: ScopeType.Group, args: '["G"]' }));
    // A delivery left pending on `waiting`: its next take is judged on the single path.
    expect(await take(store, waiting, 0, claim('w1'))).toEqual(['m1', 'm3']);
    const judge = claim('w2', 'wait');
    const batch = async () => {
      const before = sent;
      const taken = await Promise.all([
        take(store, a1, 0, claim('t1')),
        take(store, a2, 1, claim('t2')),
        take(store, a3, 0, claim('t3')),
        take(store, b1, 0, claim('t4')),
      ]);
      return { taken, trips: sent - before };
    };
    const first = await batch();
    expect(first.taken).toEqual([['m1', 'm3', 'm4'], ['m1'], ['m1', 'm3'], ['m1', 'm2']]);
    // BEGIN, the subscriptions, the log, the writes, COMMIT.
    expect(first.trips).toBe(5);
    expect(await take(store, waiting, 0, judge)).toEqual([]);
    expect(judge.shown.map((p) => p.token)).toEqual(['w1']);
    // Each delivery pending under its own claim: judged by the next take.
    const judged = [a1, a2, a3, b1].map(() => claim('again', 'wait'));
    await Promise.all([a1, a2, a3, b1].map((id, i) => take(store, id, 0, judged[i])));
    expect(judged.map((c) => c.shown.map((p) => p.token))).toEqual([['t1'], ['t2'], ['t3'], ['t4']]);
    for (const [i, id] of [a1, a2, a3, b1].entries()) await hub.subscriptions.settle(id, `t${i + 1}`, true);
    // The limit left m3 to a2; the others read to the head; nothing new is one batch of fewer trips.
    const second = await batch();
    expect(second.taken).toEqual([[], ['m3'], [], []]);
    // The saga request a1..a3 received (remembered once) lets A answer it.
    const reply = message('reply', { key: '__Response', sagaId: 'saga-1', senderConnectionId: a.connectionId });
    expect(await hub.messages.send(reply, { sagaReplyBy: a.connectionId })).toBeGreaterThan(0);
  });

  it('a batch that meets a concurrent change of one of its subscriptions fails none of its takes', async () => {
    const [contested, ...others] = await open(a, 3);
    await hub.messages.send(message('c1'));
    const blocker = await pool.connect();
    try {
      // Holds the contested subscription's row: the batch, its snapshot taken, waits for it and then fails (40001).
      await blocker.query('begin');
      await blocker.query('update subscriptions set last_active_ms = last_active_ms + 1 where id = $1', [contested]);
      const takes = Promise.all([contested, ...others].map((id, i) => take(store, id, 0, claim(`c${i}`))));
      await expect.poll(() => blockedConnections(database.url)).toBeGreaterThan(0);
      await blocker.query('commit');
      expect(await takes).toEqual([['c1'], ['c1'], ['c1']]);
    } finally {
      blocker.release();
    }
  });

  it('two processes taking one subscription at once in their batches deliver each message once', async () => {
    const otherPool = createPool({ url: database.url, role: 'store', sync: 'full', lockWaitMs: 5_000, log, max: 2 });
    const elsewhere = new PostgresMessageStore({ pool: otherPool, log, retention });
    const [shared, ...own] = await open(a, 5);
    try {
      for (let round = 0; round < 10; round++) {
        await hub.messages.send(message(`r${round}`));
        const here = claim(`p${round}`);
        const there = claim(`q${round}`);
        const [x, y, ...rest] = await Promise.all([
          take(store, shared, 0, here),
          take(elsewhere, shared, 0, there),
          ...own.map((id, i) => take(i % 2 ? store : elsewhere, id, 0, claim(`r${round}.${i}`))),
        ]);
        expect([...x, ...y]).toEqual([`r${round}`]);
        expect(rest).toEqual(own.map(() => [`r${round}`]));
        await hub.subscriptions.settle(shared, x.length > 0 ? here.token : there.token, true);
        for (const [i, id] of own.entries()) await hub.subscriptions.settle(id, `r${round}.${i}`, true);
      }
    } finally {
      await otherPool.end();
    }
  });
});
