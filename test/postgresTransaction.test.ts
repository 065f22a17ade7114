/**
 * store/postgres/connections/transaction.ts on the machine's PostgreSQL: what the hub is told when a transaction
 * fails, and what is retried.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { ClientGone, HubError } from '../src/errors.js';
import { applicationName, createPool } from '../src/store/postgres/connections/pool.js';
import type { PostgresLog } from '../src/store/postgres/connections/pool.js';
import { transaction } from '../src/store/postgres/connections/transaction.js';
import { postgresServer, testDatabase, testPool } from './support/postgres.js';
import type { TestDatabase } from './support/postgres.js';

const server = await postgresServer();

/** DatabaseBusy in PostgreSQL's words: what can hold a request up there, never SQLite's lock. */
const busyInPostgresWords = [
  'DatabaseBusy',
  'PostgreSQL is busy or unreachable.',
  'Try again shortly; no pooled connection came free, a lock stayed held past HUB_LOCK_WAIT_MS, or the connection to PostgreSQL was lost.',
];
const busyWords = (error: unknown) => {
  const { code, message, detail } = error as HubError;
  return [code, message, detail];
};

describe.skipIf(!server.available)('PostgreSQL transactions', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let admin: pg.Pool;
  const log: PostgresLog = { warn: () => {} };

  beforeAll(async () => {
    database = await testDatabase(server);
    pool = createPool({ url: database.url, role: 'tx', sync: 'full', lockWaitMs: 200, log, max: 2 });
    admin = testPool(database.url);
    await admin.query('create table t (id int primary key, v int not null)');
    await admin.query('insert into t values (1, 0)');
  });
  afterAll(async () => {
    await pool?.end();
    await admin?.end();
    await database?.drop();
  });

  it('commits, and the promise settles after the COMMIT', async () => {
    await transaction(pool, (c) => c.query('update t set v = 5 where id = 1'));
    expect((await admin.query('select v from t')).rows).toEqual([{ v: 5 }]);
  });

  it('a lock not had within lock_timeout (HUB_LOCK_WAIT_MS) is DatabaseBusy (503), and nothing is stored', async () => {
    const holder = await admin.connect();
    try {
      await holder.query('begin');
      await holder.query('update t set v = 100 where id = 1');
      const failed = await transaction(pool, (c) => c.query('update t set v = 6 where id = 1')).catch(
        (e: unknown) => e,
      );
      expect(failed).toBeInstanceOf(HubError);
      expect(busyWords(failed)).toEqual(busyInPostgresWords);
    } finally {
      await holder.query('rollback');
      holder.release();
    }
    expect((await admin.query('select v from t')).rows).toEqual([{ v: 5 }]);
  });

  it('a pool with no connection free in time is DatabaseBusy (503) in the same words', async () => {
    const single = createPool({
      url: database.url,
      role: 'tx1',
      sync: 'full',
      lockWaitMs: 200,
      connectTimeoutMs: 200,
      log,
      max: 1,
    });
    const taken = await single.connect();
    try {
      const failed = await transaction(single, (c) => c.query('select 1')).catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(HubError);
      expect(busyWords(failed)).toEqual(busyInPostgresWords);
    } finally {
      taken.release();
      await single.end();
    }
  });

  it("the hub's own error passes through as it is, and rolls back", async () => {
    const refusal = new ClientGone();
    const failed = await transaction(pool, async (c) => {
      await c.query('update t set v = 7 where id = 1');
      throw refusal;
    }).catch((e: unknown) => e);
    expect(failed).toBe(refusal);
    expect((await admin.query('select v from t')).rows).toEqual([{ v: 5 }]);
  });

  it('a serialization failure runs the work again', async () => {
    let attempts = 0;
    const other = await admin.connect();
    try {
      const result = await transaction(
        pool,
        async (c) => {
          attempts += 1;
          const { rows } = await c.query('select v from t where id = 1'); // the snapshot is taken here
          if (attempts === 1) await other.query('update t set v = v + 1 where id = 1'); // commits meanwhile
          await c.query('update t set v = $1 where id = 1', [rows[0].v + 10]); // 40001 on the first attempt
          return rows[0].v;
        },
        { isolation: 'repeatable read' },
      );
      expect(attempts).toBe(2);
      expect(result).toBe(6);
      expect((await admin.query('select v from t')).rows).toEqual([{ v: 16 }]);
    } finally {
      other.release();
    }
  });

  it('a connection killed in the middle is DatabaseBusy (503), and the next transaction gets a good one', async () => {
    const failed = await transaction(pool, async (c) => {
      await c.query('select 1');
      await admin.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and state = $2',
        [applicationName('tx'), 'idle in transaction'],
      );
      await c.query('select pg_sleep(0.05)'); // the terminated session answers with an error
      await c.query('select 2');
    }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(HubError);
    expect(busyWords(failed)).toEqual(busyInPostgresWords);
    expect(await transaction(pool, async (c) => (await c.query('select 3 as n')).rows[0].n)).toBe(3);
  });
});
