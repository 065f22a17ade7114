/**
 * Group commit on PostgreSQL (store/postgres/connections/groupCommit.ts) on the machine's PostgreSQL: one
 * transaction for what is submitted together, promises that settle after the COMMIT, a failing item
 * that rejects alone, a deadlock retried, and the doorbell rung after the COMMIT.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import type { PostgresLog } from '../src/store/postgres/connections/pool.js';
import { appendMessages } from '../src/store/postgres/connections/logs.js';
import type { NewMessage } from '../src/store/postgres/connections/logs.js';
import { GroupCommit } from '../src/store/postgres/connections/groupCommit.js';
import { notifyCommitted } from '../src/store/postgres/feed/listener.js';
import { messageRow, migratedDatabase, postgresServer, testClient, waitUntilBlocked } from './support/postgres.js';
import type { MigratedDatabase } from './support/postgres.js';

const server = await postgresServer();

describe.skipIf(!server.available)('PostgreSQL group commit', () => {
  let migrated: MigratedDatabase;
  let pool: pg.Pool;
  let admin: pg.Pool;
  let log: PostgresLog;

  beforeAll(async () => {
    migrated = await migratedDatabase(server);
    ({ pool, admin, log } = migrated);
  });
  afterAll(() => migrated?.drop());

  const messages = () =>
    new GroupCommit<NewMessage, number>({ pool, log, write: (client, items) => appendMessages(client, items) });

  it('what is submitted together is one transaction, and each promise settles after its COMMIT (another connection sees the row then)', async () => {
    const group = messages();
    const visibleAtSettlement: boolean[] = [];
    const ids = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        group.submit(messageRow(`m${i}`)).then(async (id) => {
          const { rows } = await admin.query('select 1 from messages where id = $1', [id]);
          visibleAtSettlement.push(rows.length === 1);
          return id;
        }),
      ),
    );
    expect(group.transactions).toBe(1);
    expect(ids).toEqual(ids.map((_, i) => ids[0] + i));
    expect(visibleAtSettlement).toEqual(Array(50).fill(true));
  });

  it('items submitted while a batch is in flight form the next one', async () => {
    const group = messages();
    const first = group.submit(messageRow('first'));
    await new Promise((r) => setImmediate(r)); // the first batch has started
    const rest = Array.from({ length: 10 }, (_, i) => group.submit(messageRow(`later${i}`)));
    await Promise.all([first, ...rest]);
    expect(group.transactions).toBe(2);
  });

  it('a failing item rejects alone; the others commit, with numbers still gap-free', async () => {
    const group = messages();
    const before = (await admin.query(`select seq from log_heads where log = 'messages'`)).rows[0].seq as number;
    const outcomes = await Promise.allSettled([
      group.submit(messageRow('a')),
      group.submit({ ...messageRow('bad'), key: null as unknown as string }), // violates not null
      group.submit(messageRow('c')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason.code).toBe('23502');
    const { rows } = await admin.query('select id, data from messages where id > $1 order by id', [before]);
    expect(rows).toEqual([
      { id: before + 1, data: 'a' },
      { id: before + 2, data: 'c' },
    ]);
  });

  it('a deadlock chosen as victim runs the whole batch again, and its items commit', async () => {
    await admin.query('create table deadlock_demo (id int primary key, v int not null)');
    await admin.query('insert into deadlock_demo values (1, 0), (2, 0)');
    const other = await admin.connect();
    let attempts = 0;
    let otherDone: Promise<unknown> | undefined;
    const group = new GroupCommit<number, number>({
      pool,
      log,
      write: async (client, items) => {
        attempts += 1;
        // The rerun waits for the other to commit: it could otherwise take row 1 back first and meet the
        // other again, a second deadlock.
        if (attempts > 1) await otherDone;
        // The batch is the one that detects the deadlock (its deadlock_timeout is the shorter), so it is the victim.
        await client.query(`set local deadlock_timeout = '50ms'`);
        await client.query('update deadlock_demo set v = v + 1 where id = 1');
        if (attempts === 1) {
          await other.query('begin');
          await other.query(`set local deadlock_timeout = '10s'`);
          await other.query('update deadlock_demo set v = v + 10 where id = 2');
          const otherPid = (await other.query('select pg_backend_pid() as pid')).rows[0].pid as number;
          otherDone = other.query('update deadlock_demo set v = v + 10 where id = 1').then(() => other.query('commit'));
          // The other waits on row 1 before this batch waits on row 2: the cycle exists when the batch's
          // (shorter) deadlock check runs, so the batch is the victim.
          await waitUntilBlocked(admin, otherPid);
        }
        await client.query('update deadlock_demo set v = v + 1 where id = 2');
        return items;
      },
    });
    try {
      expect(await group.submit(7)).toBe(7);
      await otherDone;
      expect(attempts).toBe(2);
      const { rows } = await admin.query('select id, v from deadlock_demo order by id');
      expect(rows).toEqual([
        { id: 1, v: 11 },
        { id: 2, v: 11 },
      ]);
    } finally {
      other.release();
    }
  });

  it('rings the doorbell after the COMMIT, on its connection, outside the transaction', async () => {
    const listener = testClient(migrated.database.url);
    await listener.connect();
    const heard: { payload: string; visible: boolean }[] = [];
    const hearing = new Promise<void>((resolve) => {
      listener.on('notification', (n) => {
        void admin.query('select count(*)::int as n from messages where data = $1', ['rung']).then(({ rows }) => {
          heard.push({ payload: n.payload ?? '', visible: rows[0].n === 1 });
          resolve();
        });
      });
    });
    await listener.query('listen hub');
    let inTransaction: unknown;
    const group = new GroupCommit<NewMessage, number>({
      pool,
      log,
      write: (client, items) => appendMessages(client, items),
      afterCommit: async (client, _items, ids) => {
        const { rows } = await client.query(
          'select pg_current_xact_id_if_assigned() as xid, now() = statement_timestamp() as autocommit',
        );
        inTransaction = rows[0];
        await notifyCommitted(client, JSON.stringify({ m: ids[ids.length - 1] }));
      },
    });
    const id = await group.submit(messageRow('rung'));
    await hearing;
    expect(heard).toEqual([{ payload: JSON.stringify({ m: id }), visible: true }]);
    expect(inTransaction).toEqual({ xid: null, autocommit: true });
    await listener.end();
  });
});
