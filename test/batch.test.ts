import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TransactionBatcher } from '../src/db/batch.js';
import type { OpenedDatabase } from '../src/db/open.js';
import { closeDatabase, openDatabase } from '../src/db/open.js';
import { tempDir } from './support/testHub.js';

let opened: OpenedDatabase | undefined;
afterEach(async () => {
  if (opened) await closeDatabase(opened);
  opened = undefined;
});

function setup() {
  opened = openDatabase(path.join(tempDir(), 'batch.db'), 'normal');
  opened.sqlite.exec('create table t (k text primary key)');
  const insert = opened.sqlite.prepare('insert into t (k) values (?)');
  const rows = () => (opened?.sqlite.prepare('select k from t order by k').all() as { k: string }[]).map((r) => r.k);
  return { batcher: new TransactionBatcher(opened.db, opened.sqlite), insert, rows };
}

describe('group commit', () => {
  it('commits pieces submitted in one turn together and settles them after the commit', async () => {
    const { batcher, insert, rows } = setup();
    const results = await Promise.all(['a', 'b', 'c'].map((k) => batcher.run(() => insert.run(k).changes)));
    expect(results).toEqual([1, 1, 1]);
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
    const { batcher, insert, rows } = setup();
    const db = opened!.db;
    let insideKysely = false;
    const kysely = db.transaction().execute(async (trx) => {
      insideKysely = true;
      await new Promise((r) => setTimeout(r, 50));
      await trx.insertInto('t' as never).values({ k: 'k' } as never).execute();
      insideKysely = false;
    });
    await new Promise((r) => setTimeout(r, 10));
    const batched = batcher.run(() => {
      expect(insideKysely).toBe(false);
      return insert.run('z').changes;
    });
    await Promise.all([kysely, batched]);
    expect(rows()).toEqual(['k', 'z']);
  });
});
