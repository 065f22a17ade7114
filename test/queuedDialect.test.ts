import type { Generated, Kysely } from 'kysely';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { OpenedDatabase } from '../src/store/sqlite/database/open.js';
import { closeDatabase, openDatabase } from '../src/store/sqlite/database/open.js';
import { tempDir } from './support/testHub.js';

let opened: OpenedDatabase | undefined;
afterEach(async () => {
  if (opened) await closeDatabase(opened);
  opened = undefined;
});

describe('the one SQLite connection behind Kysely', () => {
  it('is handed out in arrival order, a transaction keeping it until it ends', async () => {
    opened = openDatabase(path.join(tempDir(), 'queue.db'), 'normal');
    opened.sqlite.exec('create table t (seq integer primary key autoincrement, v text not null)');
    const db = opened.db as unknown as Kysely<{ t: { seq: Generated<number>; v: string } }>;
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const transaction = db.transaction().execute(async (trx) => {
      await trx.insertInto('t').values({ v: 'trx-1' }).execute();
      await held;
      await trx.insertInto('t').values({ v: 'trx-2' }).execute();
    });
    await sleep(10);
    const queued = Array.from({ length: 500 }, (_, i) =>
      db
        .insertInto('t')
        .values({ v: `q-${i}` })
        .execute(),
    );
    await sleep(10);
    release();
    await Promise.all([transaction, ...queued]);
    const order = (await db.selectFrom('t').select('v').orderBy('seq').execute()).map((r) => r.v);
    expect(order).toEqual(['trx-1', 'trx-2', ...Array.from({ length: 500 }, (_, i) => `q-${i}`)]);
  });
});
