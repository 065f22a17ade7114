/**
 * The PostgreSQL push path's shortcuts (issue 22, push throughput) on the machine's PostgreSQL: a
 * process's tail reader does not read back what the process committed itself (ownCommits.ts), yet never
 * skips what another process committed; a one-statement group commit still settles after its COMMIT; the
 * doorbell after a COMMIT does not hold up the next batch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import type { PostgresLog } from '../src/store/postgres/connections/pool.js';
import { upsertStateObjects } from '../src/store/postgres/connections/logs.js';
import type { NewStateObject } from '../src/store/postgres/connections/logs.js';
import { GroupCommit } from '../src/store/postgres/connections/groupCommit.js';
import { doorbell, OwnCommits } from '../src/store/postgres/feed/ownCommits.js';
import { TailReader } from '../src/store/postgres/feed/tailReader.js';
import { migratedDatabase, postgresServer, stateObjectRow } from './support/postgres.js';
import type { MigratedDatabase } from './support/postgres.js';
import { until } from './support/until.js';

const server = await postgresServer();

describe.skipIf(!server.available)('PostgreSQL: own commits, one-statement group commits', () => {
  let migrated: MigratedDatabase;
  let pool: pg.Pool;
  let admin: pg.Pool;
  let log: PostgresLog;

  beforeAll(async () => {
    migrated = await migratedDatabase(server);
    ({ pool, admin, log } = migrated);
  });
  afterAll(() => migrated?.drop());

  /** A tail reader with `own`, recording the names it is handed. */
  async function reader(own: OwnCommits) {
    const handed: string[] = [];
    const tail = new TailReader({
      db: pool,
      log,
      own,
      fallbackMs: 3_600_000,
      handlers: {
        stateObjects: (rows) => handed.push(...rows.map((r) => r.name)),
        messages: () => {},
        packageLogs: () => {},
      },
    });
    await tail.start();
    return { tail, handed };
  }

  /** Commits `names` in one statement; `own` records them as this process's. */
  async function commit(names: string[], own?: OwnCommits): Promise<number[]> {
    const seqs = await upsertStateObjects(
      pool,
      names.map((n) => stateObjectRow(n)),
    );
    own?.committed('state_objects', seqs[0], seqs[seqs.length - 1]);
    return seqs;
  }

  it("its own doorbell moves the cursor over what the process committed, without reading; another process's commit below is read, with the process's own rows after it", async () => {
    const own = new OwnCommits();
    const { tail, handed } = await reader(own);
    const [, last] = await commit(['A1', 'A2'], own);
    await tail.ownHint();
    expect(handed).toEqual([]);
    expect(tail.cursors?.state_objects).toBe(last);
    expect(tail.reads).toBe(0);
    // Another process commits (nothing recorded), then this one: the gap is read, never skipped.
    await commit(['B1']);
    await commit(['A3'], own);
    await tail.ownHint();
    expect(handed).toEqual(['B1', 'A3']);
    // A hint naming the log reads it; what was read is not read again.
    await commit(['B2']);
    await tail.hint(['state_objects']);
    expect(handed).toEqual(['B1', 'A3', 'B2']);
    await tail.stop();
  });

  it("a doorbell names its process, its log and the process's head of it", () => {
    const own = new OwnCommits();
    expect(doorbell(own.payload('messages'))).toEqual({ sentMs: expect.any(Number), log: 'messages', head: undefined });
    own.committed('messages', 5, 7);
    own.committed('messages', 8, 8);
    own.committed('state_objects', 3, 3);
    const payload = own.payload('messages');
    expect(own.isOwn(payload)).toBe(true);
    expect(new OwnCommits().isOwn(payload)).toBe(false);
    expect(doorbell(payload)).toEqual({ sentMs: expect.any(Number), log: 'messages', head: 8 });
    expect(doorbell('12')).toEqual({ sentMs: 12, log: undefined, head: undefined });
  });

  it("`pass` moves the cursor to a doorbell's head without reading, then over the process's own range right above it", async () => {
    const own = new OwnCommits();
    const { tail, handed } = await reader(own);
    const [b] = await commit(['P1', 'P2']);
    const [last] = await commit(['P3'], own);
    await tail.pass('state_objects', b + 1);
    expect(tail.cursors?.state_objects).toBe(last);
    expect(handed).toEqual([]);
    expect(tail.reads).toBe(0);
    // A head below the cursor leaves it where it is.
    await tail.pass('state_objects', b);
    expect(tail.cursors?.state_objects).toBe(last);
    await tail.stop();
  });

  it('a one-statement group commit settles each promise after its COMMIT (another connection sees the row then); a failing item rejects alone', async () => {
    const group = new GroupCommit<NewStateObject, number>({
      pool,
      log,
      oneStatement: true,
      write: (client, items) => upsertStateObjects(client, items),
    });
    const visible = await Promise.all(
      ['C1', 'C2', 'C3'].map((name) =>
        group.submit(stateObjectRow(name)).then(async (seq) => {
          const { rows } = await admin.query('select 1 from state_objects where seq = $1 and name = $2', [seq, name]);
          return rows.length === 1;
        }),
      ),
    );
    expect(visible).toEqual([true, true, true]);
    expect(group.transactions).toBe(1);
    const outcomes = await Promise.allSettled([
      group.submit(stateObjectRow('D1')),
      group.submit({ ...stateObjectRow('D2'), value: null as unknown as string }), // violates not null
      group.submit(stateObjectRow('D3')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });

  it('the step after a COMMIT (the doorbell) does not hold up the next batch; steps of batches committed meanwhile run once after it', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const after: number[][] = [];
    const group = new GroupCommit<NewStateObject, number>({
      pool,
      log,
      oneStatement: true,
      write: (client, items) => upsertStateObjects(client, items),
      afterCommit: async (_client, _items, seqs) => {
        after.push(seqs);
        if (after.length === 1) await held;
      },
    });
    await group.submit(stateObjectRow('E1'));
    // The first doorbell is still ringing: later batches commit all the same.
    await group.submit(stateObjectRow('E2'));
    const third = await group.submit(stateObjectRow('E3'));
    expect(group.transactions).toBe(3);
    release();
    await until(() => after.length === 2);
    // E2's and E3's steps coalesced into one run, with the latest batch's results.
    expect(after.map((s) => s.length)).toEqual([1, 1]);
    expect(after[1]).toEqual([third]);
  });
});
