/**
 * Writes have connections of their own on PostgreSQL (hubStore.ts, issue 22): a push is acknowledged
 * while every connection of the `store` pool is held by a read that waits (here on a table lock), as
 * after a PostgreSQL restart when hundreds of re-sent polls take the store pool at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import type { HubStore } from '../src/hub/ports/hubStore.js';
import { openTestHubStore, postgresServer, testClient, testDatabase, testPool } from './support/postgres.js';
import type { TestDatabase } from './support/postgres.js';
import { write } from './support/storeTakes.js';
import { until } from './support/until.js';

const server = await postgresServer();

describe.skipIf(!server.available)('PostgreSQL: writes beside a busy store pool', () => {
  let database: TestDatabase;
  let store: HubStore;
  /** Holds the lock (in its transaction). */
  let locker: pg.Client;
  /** Looks (outside any transaction: pg_stat_activity is one snapshot per transaction). */
  let looker: pg.Pool;

  beforeAll(async () => {
    database = await testDatabase(server);
    store = await openTestHubStore(database.url, { lockWaitMs: 30_000, poolMax: 1 });
    locker = testClient(database.url);
    await locker.connect();
    looker = testPool(database.url, 1);
  });
  afterAll(async () => {
    await locker?.query('rollback').catch(() => {});
    await locker?.end();
    await looker?.end();
    await store?.close();
    await database?.drop();
  });

  it("acknowledges a push while the store pool's only connection waits on a lock", async () => {
    await locker.query('begin');
    await locker.query('lock table subscriptions in access exclusive mode');
    let countsDone = false;
    const counts = store.counts().finally(() => (countsDone = true));
    // The store pool's one connection is inside `counts`, waiting for the lock (in this test's database:
    // another run's hubs may wait on locks of their own meanwhile).
    await until(async () => {
      const { rows } = await looker.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity
          where application_name like 'hub:%:store' and wait_event_type = 'Lock' and datname = current_database()`,
      );
      return rows[0].n === 1;
    });
    await store.stateObjects.push(write('Pushed', 1));
    expect(countsDone).toBe(false);
    const { rows } = await looker.query<{ value: string }>("select value from state_objects where name = 'Pushed'");
    expect(rows).toEqual([{ value: '1' }]);
    await locker.query('commit');
    await counts;
  });
});
