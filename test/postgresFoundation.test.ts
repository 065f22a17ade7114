/**
 * The PostgreSQL engine's foundations (issue 22) on the machine's PostgreSQL, each file in a database
 * of its own: connection settings per role, a pool that survives killed connections, the migrator
 * (also raced by several "processes" at once), and gap-free log numbers (the gap test).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { sql } from 'kysely';
import { applicationName, createPool, openPostgres } from '../src/store/postgres/connections/pool.js';
import type { PostgresLog } from '../src/store/postgres/connections/pool.js';
import { migratePostgres } from '../src/store/postgres/connections/migrate.js';
import { postgresMigrations } from '../migrations/postgres/index.js';
import { appendMessages, logHeads, upsertStateObjects } from '../src/store/postgres/connections/logs.js';
import type { PostgresDatabase } from '../src/store/postgres/connections/schema.js';
import {
  messageRow,
  postgresServer,
  stateObjectRow,
  testDatabase,
  testPool,
  waitUntilBlocked,
} from './support/postgres.js';
import type { TestDatabase } from './support/postgres.js';
import { until } from './support/until.js';

const server = await postgresServer();
/** PostgreSQL's migration list, in the order it runs. */
const everyMigration = Object.keys(postgresMigrations).sort();

/** A log that keeps what it was told, for assertions. */
const recordingLog = () => {
  const warnings: { object: object; message: string }[] = [];
  const log: PostgresLog = { warn: (object, message) => warnings.push({ object, message }) };
  return { log, warnings };
};

describe.skipIf(!server.available)('PostgreSQL foundations', () => {
  let database: TestDatabase;
  let admin: pg.Pool;
  const { log, warnings } = recordingLog();

  beforeAll(async () => {
    database = await testDatabase(server);
    admin = testPool(database.url, 2);
  });
  afterAll(async () => {
    await admin?.end();
    await database?.drop();
  });

  describe('connections', () => {
    it('are named hub:<pid>:<role> and carry lock_timeout, idle_in_transaction_session_timeout and synchronous_commit per HUB_SYNC', async () => {
      const full = createPool({ url: database.url, role: 'writer', sync: 'full', lockWaitMs: 1234, log });
      const normal = createPool({
        url: database.url,
        role: 'read',
        sync: 'normal',
        lockWaitMs: 10_000,
        idleInTransactionMs: 7000,
        log,
      });
      try {
        const settings = async (pool: pg.Pool) =>
          (
            await pool.query(`select current_setting('application_name') as name,
          current_setting('lock_timeout') as lock, current_setting('idle_in_transaction_session_timeout') as idle,
          current_setting('synchronous_commit') as sync`)
          ).rows[0];
        expect(await settings(full)).toEqual({
          name: `hub:${process.pid}:writer`,
          lock: '1234ms',
          idle: '5s',
          sync: 'on',
        });
        expect(await settings(normal)).toEqual({
          name: `hub:${process.pid}:read`,
          lock: '10s',
          idle: '7s',
          sync: 'off',
        });
      } finally {
        await full.end();
        await normal.end();
      }
    });

    it('give bigint and numeric results as numbers', async () => {
      const pool = createPool({ url: database.url, role: 'read', sync: 'full', lockWaitMs: 1000, log });
      try {
        const { rows } = await pool.query(
          'select 9007199254740991::bigint as big, count(*) as n, sum(1::bigint) as s from generate_series(1, 3)',
        );
        expect(rows[0]).toEqual({ big: 9007199254740991, n: 3, s: 3 });
      } finally {
        await pool.end();
      }
    });

    it('killed while idle or between two statements of a transaction fail only that transaction: the process goes on and the next query works', async () => {
      const before = warnings.length;
      const { db, pool } = openPostgres<PostgresDatabase>({
        url: database.url,
        role: 'victim',
        sync: 'full',
        lockWaitMs: 1000,
        log,
      });
      try {
        await sql`select 1`.execute(db); // one idle connection in the pool
        const killIdle = await admin.query(
          'select pg_terminate_backend(pid) as killed from pg_stat_activity where application_name = $1',
          [applicationName('victim')],
        );
        expect(killIdle.rows.map((r) => r.killed)).toEqual([true]);
        // The pool drops it when its socket reports the end (pool.on('error') logs it).
        await until(() => pool.totalCount === 0);

        const transaction = db.transaction().execute(async (trx) => {
          await sql`select 1`.execute(trx);
          // Killed while checked out, between statements (no query running: the client itself gets the error).
          await admin.query(
            `select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and state = 'idle in transaction'`,
            [applicationName('victim')],
          );
          await sleep(100);
          await sql`select 2`.execute(trx);
        });
        await expect(transaction).rejects.toThrow();
        const { rows } = await sql<{ one: number }>`select 1 as one`.execute(db);
        expect(rows).toEqual([{ one: 1 }]);
        expect(warnings.length).toBeGreaterThan(before);
        expect(warnings.slice(before).every((w) => /connection lost/.test(w.message))).toBe(true);
      } finally {
        await db.destroy();
      }
    });
  });

  describe('migrations', () => {
    it('create the schema once: a second run applies nothing', async () => {
      const { db } = openPostgres({ url: database.url, role: 'migrate', sync: 'full', lockWaitMs: 10_000, log });
      try {
        expect(await migratePostgres(db)).toEqual({ applied: everyMigration });
        expect(await migratePostgres(db)).toEqual({ applied: [] });
        const { rows } = await sql<{ table_name: string }>`select table_name from information_schema.tables
          where table_schema = 'public' order by table_name`.execute(db);
        expect(rows.map((r) => r.table_name)).toEqual([
          'auth_failures',
          'callers',
          'configuration_document',
          'configuration_versions',
          'credential_subscriptions',
          'hub_processes',
          'hub_settings',
          'kysely_migration',
          'kysely_migration_lock',
          'log_heads',
          'message_group_members',
          'messages',
          'package_descriptors',
          'package_instance_groups',
          'package_logs',
          'repository_archives',
          'repository_packages',
          'saga_requests',
          'state_object_filters',
          'state_objects',
          'subscriptions',
        ]);
        const heads = await sql<{ log: string; seq: number }>`select log, seq from log_heads order by log`.execute(db);
        expect(heads.rows).toEqual([
          { log: 'messages', seq: 0 },
          { log: 'package_logs', seq: 0 },
          { log: 'state_objects', seq: 0 },
        ]);
      } finally {
        await db.destroy();
      }
    });

    it("turn a filter's * pattern into a LIKE pattern with \\ % _ escaped", async () => {
      await admin.query(`insert into callers values ('c1', 'Consumer/App', 'consumer', '', '', 1)`);
      await admin.query(`insert into subscriptions (id, kind, owner_connection_id, credential_name, created_ms, last_active_ms)
        values ('s1', 'state_objects', 'c1', 'cred', 1, 1)`);
      await admin.query(`insert into state_object_filters (subscription_id, sentinel_pattern, package_pattern, name_pattern, type_pattern)
        values ('s1', '*', 'a_b%c\\d', 'x*y*', '')`);
      const { rows } = await admin.query(
        'select sentinel_like, package_like, name_like, type_like from state_object_filters',
      );
      expect(rows).toEqual([{ sentinel_like: '%', package_like: 'a\\_b\\%c\\\\d', name_like: 'x%y%', type_like: '' }]);
      const matches = await admin.query(`select $1::text like package_like as m from state_object_filters`, [
        'a_b%c\\d',
      ]);
      expect(matches.rows).toEqual([{ m: true }]);
      const nonMatch = await admin.query(`select $1::text like package_like as m from state_object_filters`, [
        'aXb%c\\d',
      ]);
      expect(nonMatch.rows).toEqual([{ m: false }]);
      await admin.query('delete from subscriptions; delete from callers');
    });

    it('raced by six processes on one fresh database: all succeed, one migrates, the schema exists once', async () => {
      const fresh = await testDatabase(server);
      const opened = Array.from(
        { length: 6 },
        (_, i) => openPostgres({ url: fresh.url, role: `migrate${i}`, sync: 'full', lockWaitMs: 10_000, log }).db,
      );
      try {
        const outcomes = await Promise.allSettled(opened.map((db) => migratePostgres(db)));
        expect(outcomes.map((o) => o.status)).toEqual(Array(6).fill('fulfilled'));
        const applied = outcomes.map((o) => (o as PromiseFulfilledResult<{ applied: string[] }>).value.applied);
        expect(applied.filter((a) => a.length > 0)).toEqual([everyMigration]);
        const ran = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(opened[0]);
        expect(ran.rows).toEqual(everyMigration.map((name) => ({ name })));
        const heads = await sql<{ n: number }>`select count(*) as n from log_heads`.execute(opened[0]);
        expect(heads.rows).toEqual([{ n: 3 }]);
      } finally {
        await Promise.all(opened.map((db) => db.destroy()));
        await fresh.drop();
      }
    });

    it('refuse a database migrated by a newer hub (a migration this build does not know)', async () => {
      const { db } = openPostgres({ url: database.url, role: 'migrate', sync: 'full', lockWaitMs: 10_000, log });
      try {
        await sql`insert into kysely_migration (name, timestamp) values ('9999_future', '2030-01-01')`.execute(db);
        await expect(migratePostgres(db)).rejects.toThrow(/9999_future/);
      } finally {
        await sql`delete from kysely_migration where name = '9999_future'`.execute(db);
        await db.destroy();
      }
    });
  });

  describe('gap-free log numbers', () => {
    beforeAll(async () => {
      const { db } = openPostgres({ url: database.url, role: 'migrate', sync: 'full', lockWaitMs: 10_000, log });
      await migratePostgres(db).finally(() => db.destroy());
    });
    const writers = () =>
      createPool({ url: database.url, role: 'writer', sync: 'full', lockWaitMs: 10_000, log, max: 4 });

    const cases = [
      {
        log: 'messages' as const,
        write: (c: pg.PoolClient, i: number) => appendMessages(c, [messageRow(`m${i}`)]),
        readAbove: async (cursor: number) =>
          (await admin.query('select id as n from messages where id > $1 order by id', [cursor])).rows.map((r) =>
            Number(r.n),
          ),
      },
      {
        log: 'state_objects' as const,
        write: (c: pg.PoolClient, i: number) => upsertStateObjects(c, [stateObjectRow(`o${i % 2}`)]),
        readAbove: async (cursor: number) =>
          (await admin.query('select seq as n from state_objects where seq > $1 order by seq', [cursor])).rows.map(
            (r) => Number(r.n),
          ),
      },
    ];

    for (const { log: logName, write, readAbove } of cases) {
      it(`${logName}: a writer held open before COMMIT keeps a later writer and every > cursor reader behind it; after it commits the reader sees both, in order`, async () => {
        const pool = writers();
        const a = await pool.connect();
        const b = await pool.connect();
        try {
          const cursor = (await logHeads(admin))[logName];
          await a.query('begin');
          const [first] = await write(a, 1);
          expect(first).toBe(cursor + 1);

          await b.query('begin');
          const bPid = (await b.query('select pg_backend_pid() as pid')).rows[0].pid as number;
          let bNumber: number | undefined;
          const bWrite = write(b, 2).then(async ([n]) => {
            bNumber = n;
            await b.query('commit');
            return n;
          });
          await waitUntilBlocked(admin, bPid);
          // B cannot commit a number while A holds a smaller one: the reader sees nothing above its cursor yet.
          expect(bNumber).toBeUndefined();
          expect(await readAbove(cursor)).toEqual([]);
          expect((await logHeads(admin))[logName]).toBe(cursor);

          await a.query('commit');
          const second = await bWrite;
          expect(second).toBe(first + 1);
          expect(await readAbove(cursor)).toEqual([first, second]);
          expect((await logHeads(admin))[logName]).toBe(second);
        } finally {
          a.release();
          b.release();
          await pool.end();
        }
      });

      it(`${logName}: a rolled-back write gives its number back (no hole for a reader to wait on or skip)`, async () => {
        const pool = writers();
        const a = await pool.connect();
        try {
          const cursor = (await logHeads(admin))[logName];
          await a.query('begin');
          expect(await write(a, 3)).toEqual([cursor + 1]);
          await a.query('rollback');
          expect(await write(a, 4)).toEqual([cursor + 1]);
          expect((await logHeads(admin))[logName]).toBe(cursor + 1);
        } finally {
          a.release();
          await pool.end();
        }
      });
    }

    it('a batch takes consecutive numbers in the order given', async () => {
      const cursor = (await logHeads(admin)).messages;
      const ids = await appendMessages(admin, [messageRow('x'), messageRow('y'), messageRow('z')]);
      expect(ids).toEqual([cursor + 1, cursor + 2, cursor + 3]);
      const { rows } = await admin.query('select data from messages where id > $1 order by id', [cursor]);
      expect(rows.map((r) => r.data)).toEqual(['x', 'y', 'z']);
      const seqs = await upsertStateObjects(admin, [stateObjectRow('p'), stateObjectRow('q')]);
      expect(seqs[1]).toBe(seqs[0] + 1);
    });

    it('(why) a plain sequence lets a > cursor reader pass a number committed later, on this server', async () => {
      await admin.query('create table seq_demo (id bigserial primary key, v text)');
      const pool = writers();
      const a = await pool.connect();
      try {
        await a.query('begin');
        const first = (await a.query(`insert into seq_demo (v) values ('a') returning id`)).rows[0].id;
        const second = (await admin.query(`insert into seq_demo (v) values ('b') returning id`)).rows[0].id;
        expect(second).toBeGreaterThan(first);
        const seen = (await admin.query('select id from seq_demo where id > 0 order by id')).rows.map((r) =>
          Number(r.id),
        );
        expect(seen).toEqual([Number(second)]); // a reader's cursor moves to `second` and never returns `first`
        await a.query('commit');
      } finally {
        a.release();
        await pool.end();
      }
    });
  });
});
