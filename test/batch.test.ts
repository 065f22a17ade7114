import Sqlite from 'better-sqlite3';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { BatcherOptions } from '../src/store/sqlite/database/batch.js';
import { TransactionBatcher } from '../src/store/sqlite/database/batch.js';
import type { OpenedDatabase } from '../src/store/sqlite/database/open.js';
import { closeDatabase, openDatabase } from '../src/store/sqlite/database/open.js';
import { tempDir } from './support/testHub.js';

let opened: OpenedDatabase | undefined;
afterEach(async () => {
  if (opened) await closeDatabase(opened);
  opened = undefined;
});

function setup(options?: BatcherOptions) {
  opened = openDatabase(path.join(tempDir(), 'batch.db'), 'normal');
  opened.sqlite.exec('create table t (k text primary key)');
  const insert = opened.sqlite.prepare('insert into t (k) values (?)');
  const rows = () => (opened?.sqlite.prepare('select k from t order by k').all() as { k: string }[]).map((r) => r.k);
  return { batcher: new TransactionBatcher(opened.db, opened.sqlite, options), insert, rows, file: opened.sqlite.name };
}

/** The keys another connection sees: only what is committed. */
function committedKeys(file: string): string[] {
  const other = new Sqlite(file, { readonly: true });
  try {
    return other.prepare('select k from t order by k').pluck().all() as string[];
  } finally {
    other.close();
  }
}

describe('group commit', () => {
  it('commits pieces submitted in one turn together and settles them after the commit', async () => {
    const events: string[] = [];
    // No time budget: a preempted process must not split the three pieces.
    const { batcher, insert, rows, file } = setup({
      committed: (_ms, pieces) => events.push(`commit of ${pieces}`),
      budgetMs: Infinity,
    });
    const results = await Promise.all(
      ['a', 'b', 'c'].map((k) =>
        batcher
          .run(() => insert.run(k).changes)
          .then((changes) => {
            events.push(`${k} settled, committed: ${committedKeys(file).join()}`);
            return changes;
          }),
      ),
    );
    expect(results).toEqual([1, 1, 1]);
    expect(events).toEqual([
      'commit of 3',
      'a settled, committed: a,b,c',
      'b settled, committed: a,b,c',
      'c settled, committed: a,b,c',
    ]);
    expect(rows()).toEqual(['a', 'b', 'c']);
  });

  it('rolls back only the piece that fails; the others commit', async () => {
    const { batcher, insert, rows } = setup();
    const outcomes = await Promise.allSettled([
      batcher.run(() => insert.run('a')),
      batcher.run(() => {
        insert.run('b');
        throw new Error('piece b failed');
      }),
      batcher.run(() => insert.run('c')),
      batcher.run(() => insert.run('a')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    expect(((outcomes[1] as PromiseRejectedResult).reason as Error).message).toBe('piece b failed');
    expect(((outcomes[3] as PromiseRejectedResult).reason as Error).message).toMatch(/UNIQUE/);
    expect(rows()).toEqual(['a', 'c']);
  });

  it('waits for a Kysely transaction on the same connection instead of nesting in it', async () => {
    const { batcher, insert } = setup();
    const { db, sqlite } = opened!;
    let insideKysely = false;
    let enter!: () => void;
    let release!: () => void;
    const entered = new Promise<void>((resolve) => (enter = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const kysely = db.transaction().execute(async (trx) => {
      insideKysely = true;
      enter();
      await released;
      await trx
        .insertInto('t' as never)
        .values({ k: 'k' } as never)
        .execute();
      insideKysely = false;
    });
    await entered;
    let pieceRan = false;
    const batched = batcher.run(() => {
      pieceRan = true;
      expect(insideKysely).toBe(false);
      return insert.run('z').changes;
    });
    // The batch's turn comes (setImmediate) and goes while Kysely's transaction is open: the piece waits.
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(sqlite.inTransaction).toBe(true);
    expect(pieceRan).toBe(false);
    release();
    await Promise.all([kysely, batched]);
    expect((sqlite.prepare('select k from t order by rowid').all() as { k: string }[]).map((r) => r.k)).toEqual([
      'k',
      'z',
    ]);
  });

  /** A piece that holds the event loop for `ms` (longer than the batch's time budget when 15). */
  const spin = (ms: number) => {
    const until = performance.now() + ms;
    while (performance.now() < until);
  };

  it('commits a long batch in parts and lets a timer run between two commits, in order', async () => {
    opened = openDatabase(path.join(tempDir(), 'batch.db'), 'normal');
    const sqlite = opened.sqlite;
    sqlite.exec('create table t (k text primary key)');
    const insert = sqlite.prepare('insert into t (k) values (?)');
    const count = sqlite.prepare('select count(*) as n from t');
    const commits: number[] = [];
    let seenByTimer: number | undefined;
    let timerInTransaction: boolean | undefined;
    let commitsBeforeTimer: number | undefined;
    const batcher = new TransactionBatcher(opened.db, sqlite, {
      committed: (_ms, pieces) => {
        commits.push(pieces);
        // Armed once the first part has committed (a timer armed earlier could run before any batch).
        if (commits.length === 1) {
          setTimeout(() => {
            seenByTimer = (count.get() as { n: number }).n;
            timerInTransaction = sqlite.inTransaction;
            commitsBeforeTimer = commits.length;
          }, 0);
        }
      },
    });
    const keys = Array.from({ length: 12 }, (_, i) => `k${String(i).padStart(2, '0')}`);
    const settled: string[] = [];
    const seenByPiece: number[] = [];
    const results = await Promise.all(
      keys.map((k) =>
        batcher
          .run(() => {
            seenByPiece.push(settled.length);
            spin(15);
            return insert.run(k).changes;
          })
          .then((changes) => {
            settled.push(k);
            return changes;
          }),
      ),
    );
    expect(results).toEqual(keys.map(() => 1));
    expect(settled).toEqual(keys);
    // More than one commit, and the timer ran between two of them, outside any transaction, seeing
    // what the commits before it stored.
    expect(commits.length).toBeGreaterThan(1);
    expect(commits.reduce((a, b) => a + b, 0)).toBe(keys.length);
    expect(timerInTransaction).toBe(false);
    expect(commitsBeforeTimer).toBeLessThan(commits.length);
    expect(seenByTimer).toBe(commits.slice(0, commitsBeforeTimer).reduce((a, b) => a + b, 0));
    // The pieces of a later part ran after those of the earlier parts were settled.
    expect(seenByPiece[keys.length - 1]).toBeGreaterThan(0);
    expect((sqlite.prepare('select k from t order by rowid').all() as { k: string }[]).map((r) => r.k)).toEqual(keys);
  });

  it('still rolls back only the failing piece when a long batch is committed in parts', async () => {
    const { batcher, insert, rows } = setup();
    const keys = Array.from({ length: 8 }, (_, i) => `k${i}`);
    const outcomes = await Promise.allSettled(
      keys.map((k, i) =>
        batcher.run(() => {
          spin(6);
          insert.run(k);
          if (i === 1 || i === 6) throw new Error(`piece ${k} failed`);
        }),
      ),
    );
    expect(outcomes.map((o) => o.status)).toEqual(keys.map((_, i) => (i === 1 || i === 6 ? 'rejected' : 'fulfilled')));
    expect(rows()).toEqual(keys.filter((_, i) => i !== 1 && i !== 6));
  });

  /**
   * Runs `waking` as a batch and, from its settlement (as a woken poll's continuation does), submits
   * what `follow` submits; `order` gets 'next turn' once a turn of the event loop has passed.
   */
  const fromSettlement = <T>(
    batcher: TransactionBatcher,
    waking: () => unknown,
    order: string[],
    follow: () => Promise<T>,
  ): Promise<T> =>
    batcher.run(waking).then(async () => {
      setImmediate(() => order.push('next turn'));
      await Promise.resolve();
      return follow();
    });

  it("runs what a batch's settlement submits (a woken poll's read) in a transaction of its own after the commit, before the next turn", async () => {
    // No time budget: a preempted process must not use it up and close the window.
    const { batcher, insert, rows } = setup({ budgetMs: Infinity });
    const file = opened!.sqlite.name;
    const order: string[] = [];
    const read = await fromSettlement(
      batcher,
      () => insert.run('a'),
      order,
      () =>
        batcher.run(() => {
          order.push('read');
          // Another connection sees only what is committed: the first piece's commit came before this one ran.
          const other = new Sqlite(file, { readonly: true });
          try {
            return other.prepare('select k from t').pluck().all();
          } finally {
            other.close();
          }
        }),
    );
    expect(read).toEqual(['a']);
    expect(order).toEqual(['read']);
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['read', 'next turn']);
    // Only once per settlement: what the second one's continuations submit waits for a turn as usual.
    const third = batcher.run(() => insert.run('b'));
    await new Promise((r) => setImmediate(r));
    await third;
    expect(rows()).toEqual(['a', 'b']);
  });

  it("gives what a batch's settlement submits a time budget of its own (a push's woken reads in one transaction)", async () => {
    // The waking batch uses 80 of the 200 ms; its continuation submits four pieces of 40 ms. With only
    // what was left of the budget (≤ 120 ms) they would split 3 + 1; with a budget of their own they
    // commit as one (a margin of 40 ms for the process being preempted).
    const commits: number[] = [];
    const { batcher, insert } = setup({ budgetMs: 200, committed: (_ms, pieces) => commits.push(pieces) });
    const order: string[] = [];
    await fromSettlement(
      batcher,
      () => {
        spin(80);
        insert.run('a');
      },
      order,
      () =>
        Promise.all(
          ['b', 'c', 'd', 'e'].map((k) =>
            batcher.run(() => {
              spin(40);
              insert.run(k);
              order.push(k);
            }),
          ),
        ),
    );
    expect(commits).toEqual([1, 4]);
    expect(order).toEqual(['b', 'c', 'd', 'e']);
  });

  it('leaves what the settlement submits to a later turn when the batch used up its time budget', async () => {
    const { batcher, insert } = setup();
    const order: string[] = [];
    await fromSettlement(
      batcher,
      () => {
        spin(15);
        insert.run('a');
      },
      order,
      () => batcher.run(() => order.push('read')),
    );
    expect(order).toEqual(['next turn', 'read']);
  });

  it('leaves what the settlement of a large batch submits to a later turn (many requests already shared this one)', async () => {
    // No time budget: a preempted process must not split the 40 pieces into a large and a small batch.
    const { batcher, insert } = setup({ budgetMs: Infinity });
    const order: string[] = [];
    const pieces = Array.from({ length: 40 }, (_, i) => batcher.run(() => insert.run(`k${i}`)));
    await Promise.all(pieces).then(async () => {
      setImmediate(() => order.push('next turn'));
      await Promise.resolve();
      return batcher.run(() => order.push('read'));
    });
    expect(order).toEqual(['next turn', 'read']);
  });
});
