/**
 * What SQLite's single writer made safe, raced from two "processes" (two engines, each its own pool)
 * on one PostgreSQL database (issue 22): the per-credential cap, a filter added once, an expiry
 * announced once, the downtime discounted once, one sweep for both (and a subscription whose poll waits
 * on the one that does not sweep kept), and a push on one read through the other.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { PostgresHubStore } from '../src/store/postgres/hubStore.js';
import type { SubscriptionOwner } from '../src/hub/ports/subscriptions.js';
import { openTestHubStore, postgresServer, testDatabase, testPool } from './support/postgres.js';
import type { TestDatabase } from './support/postgres.js';

const server = await postgresServer();
const MAX = 3;

describe.skipIf(!server.available)("two processes on one PostgreSQL race the rules SQLite's single writer kept", () => {
  let database: TestDatabase;
  let a: PostgresHubStore;
  let b: PostgresHubStore;
  let admin: pg.Pool;

  beforeAll(async () => {
    database = await testDatabase(server);
    const options = { maxSubscriptionsPerCredential: MAX };
    // Both start at once: the migrator's lock lets one migrate.
    [a, b] = await Promise.all([openTestHubStore(database.url, options), openTestHubStore(database.url, options)]);
    admin = testPool(database.url, 2);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await admin?.end();
    await database?.drop();
  });

  const ownerNamed = async (credentialName: string): Promise<SubscriptionOwner> => {
    const connectionId = await a.callers.record({
      connectionId: randomUUID(),
      friendlyName: `Consumer/${credentialName}`,
      kind: 'consumer',
      sentinelName: 'Consumer',
      packageName: credentialName,
      firstSeenMs: 1,
    });
    return { connectionId, credentialName };
  };

  it('the subscription cap holds across processes: of ten opened at once on two, exactly the cap succeed', async () => {
    const owner = await ownerNamed('capped');
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).subscriptions.openMessages(owner, undefined)),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(MAX);
    expect(
      outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason.code),
    ).toEqual(Array(10 - MAX).fill('TooManySubscriptions'));
    const { rows } = await admin.query('select count(*) as n from subscriptions where credential_name = $1', [
      'capped',
    ]);
    expect(rows).toEqual([{ n: MAX }]);
  });

  it('the same filter added on both at once is added once', async () => {
    const owner = await ownerNamed('filters');
    const { id } = await a.subscriptions.openStateObjects(owner, undefined, {
      sentinel: '*',
      package: '*',
      name: 'X',
      type: '*',
    });
    const both = await Promise.all(
      [a, b].map((e) =>
        e.subscriptions.openStateObjects(owner, id, { sentinel: '*', package: '*', name: 'Y', type: '*' }),
      ),
    );
    expect(both.map((o) => o.id)).toEqual([id, id]);
    expect(both.map((o) => o.added).sort()).toEqual([false, true]);
    const { rows } = await admin.query(
      'select name_pattern from state_object_filters where subscription_id = $1 order by id',
      [id],
    );
    expect(rows).toEqual([{ name_pattern: 'X' }, { name_pattern: 'Y' }]);
  });

  it('an expiry run by both at once is announced once', async () => {
    await a.stateObjects.push({
      sentinelName: 'S',
      packageName: 'P',
      name: 'E',
      type: 'T',
      value: '1',
      metadatas: '{}',
      lastUpdateMs: 1,
      lifetimeS: 1,
      expiresAtMs: 5_000,
    });
    const [fromA, fromB] = await Promise.all([a.stateObjects.expire(6_000), b.stateObjects.expire(6_000)]);
    expect([...fromA, ...fromB].map((o) => o.name)).toEqual(['E']);
  });

  it('two processes starting at once discount the downtime once', async () => {
    const owner = await ownerNamed('downtime');
    const { id } = await a.subscriptions.openMessages(owner, undefined);
    const now = Date.now();
    await a.subscriptions.heartbeat(now - 10_000);
    await admin.query('update subscriptions set last_active_ms = $1 where id = $2', [now - 20_000, id]);
    await Promise.all([a.subscriptions.discountDowntime(now), b.subscriptions.discountDowntime(now)]);
    const { rows } = await admin.query('select last_active_ms from subscriptions where id = $1', [id]);
    expect(rows).toEqual([{ last_active_ms: now - 10_000 }]);
  });

  it('a process starting while another runs discounts nothing: the hub was not down', async () => {
    const owner = await ownerNamed('running');
    const { id } = await a.subscriptions.openMessages(owner, undefined);
    const now = Date.now();
    await a.subscriptions.heartbeat(now - 10_000);
    await admin.query('update subscriptions set last_active_ms = $1 where id = $2', [now - 20_000, id]);
    const running = {
      id: 'running',
      host: 'elsewhere',
      pid: 1,
      version: 'x',
      startedMs: now - 60_000,
      waitingPolls: 0,
      addresses: [],
      requests: 0,
      authFailures: 0,
    };
    await b.processes.heartbeat(running);
    try {
      await a.subscriptions.discountDowntime(now);
      const { rows } = await admin.query('select last_active_ms from subscriptions where id = $1', [id]);
      expect(rows).toEqual([{ last_active_ms: now - 20_000 }]);
    } finally {
      await b.processes.remove(running.id, 60_000);
    }
  });

  it('what one process pushes, purges and sends, a subscription read through the other gets, once', async () => {
    const owner = await ownerNamed('reader');
    const objects = await b.subscriptions.openStateObjects(owner, undefined, {
      sentinel: 'S2',
      package: '*',
      name: '*',
      type: '*',
    });
    const messages = await b.subscriptions.openMessages(owner, undefined);
    await a.stateObjects.push({
      sentinelName: 'S2',
      packageName: 'P',
      name: 'N',
      type: 'T',
      value: '7',
      metadatas: '{}',
      lastUpdateMs: 1,
      lifetimeS: 0,
      expiresAtMs: null,
    });
    await a.messages.send({
      senderConnectionId: owner.connectionId,
      senderType: 0,
      senderFriendlyName: 'Consumer/reader',
      scope: 5,
      args: '[]',
      sagaId: null,
      key: 'K',
      data: '"hello"',
      sentMs: 1,
    });
    const signal = new AbortController().signal;
    expect((await b.stateObjects.take(objects.id, 0, signal)).objects.map((c) => c.current?.value)).toEqual(['7']);
    await a.stateObjects.purge({ sentinelName: 'S2', packageName: 'P' }, { name: '*', type: '*' });
    expect((await b.stateObjects.take(objects.id, 0, signal)).objects.map((c) => c.current)).toEqual([undefined]);
    expect((await b.messages.take(messages.id, 0, signal)).messages.map((m) => m.data)).toEqual(['"hello"']);
    expect((await a.messages.take(messages.id, 0, signal)).messages).toEqual([]);
  });

  it('one process sweeps for both: of two sweeps at once one sweeps, and none again until half an interval passed', async () => {
    const owner = await ownerNamed('swept');
    const idle = await a.subscriptions.openMessages(owner, undefined);
    const waiting = await a.subscriptions.openMessages(owner, undefined);
    // Both idle since long before the cutoff (every other subscription of this file is newer than it).
    await admin.query('update subscriptions set last_active_ms = 500 where id = any($1)', [[idle.id, waiting.id]]);
    // B's poll of `waiting` has waited long: B keeps it active, A's sweep leaves it.
    await b.subscriptions.keepActive([waiting.id], 900);
    const now = Date.now();
    const INTERVAL = 60_000;
    const both = await Promise.all([
      a.subscriptions.sweep(now, 800, [], INTERVAL),
      b.subscriptions.sweep(now, 800, [], INTERVAL),
    ]);
    const swept = both.filter((r) => r !== undefined);
    expect(swept).toHaveLength(1);
    expect(swept[0]!.map((e) => e.id)).toEqual([idle.id]);
    expect(await a.subscriptions.findOwned(owner, waiting.id, 'messages')).toBeDefined();
    // Another sweep within half an interval, by either, does nothing.
    expect(await a.subscriptions.sweep(now + INTERVAL / 2 - 1, 800, [], INTERVAL)).toBeUndefined();
    expect(await b.subscriptions.sweep(now + INTERVAL / 2 - 1, 800, [], INTERVAL)).toBeUndefined();
    // Later, the next one sweeps (nothing is idle before this cutoff any more).
    expect(await b.subscriptions.sweep(now + INTERVAL, 800, [], INTERVAL)).toEqual([]);
  });

  it('a sweep waits for nobody: while another process holds the sweep, it says so at once', async () => {
    const holder = await admin.connect();
    try {
      await holder.query('begin');
      await holder.query(`select pg_advisory_xact_lock(hashtext('hub.sweep'))`);
      expect(await a.subscriptions.sweep(Date.now() + 3_600_000, 0, [], 0)).toBeUndefined();
    } finally {
      await holder.query('rollback');
      holder.release();
    }
    expect(await a.subscriptions.sweep(Date.now() + 3_600_000, 0, [], 0)).toEqual([]);
  });
});
