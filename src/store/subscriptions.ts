/** Subscriptions (StateObject and message), their filters and joined message groups. */
import type Sqlite from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { prepareQuery } from '../db/prepared.js';
import { sql } from 'kysely';
import type { Database, SubscriptionRow } from '../db/schema.js';

type Executor = Kysely<Database>;
type NewSubscription = Omit<SubscriptionRow, 'queued_messages'>;

/** Removes subscriptions idle since before `cutoff`, except `keep` (those with a waiting poll). */
export async function deleteIdleSubscriptions(db: Executor, cutoff: number, keep: string[]): Promise<string[]> {
  let query = db.deleteFrom('subscriptions').where('last_active_ms', '<', cutoff);
  if (keep.length > 0 && keep.length < 30_000) query = query.where('id', 'not in', keep);
  const rows = await query.returning('id').execute();
  return rows.map((r) => r.id);
}

/** Moves every subscription's idle clock forward, so time the hub was down does not count. */
export async function shiftSubscriptionActivity(db: Executor, byMs: number): Promise<void> {
  await db
    .updateTable('subscriptions')
    .set({ last_active_ms: sql<number>`last_active_ms + ${byMs}` })
    .execute();
}

export async function countSubscriptions(db: Executor): Promise<{ kind: string; n: number }[]> {
  const rows = await db
    .selectFrom('subscriptions')
    .select(['kind', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('kind')
    .execute();
  return rows.map((r) => ({ kind: r.kind, n: Number(r.n) }));
}

/** Creating, looking up and touching subscriptions, run inside a batch transaction (db/batch.ts). */
export class SubscriptionStatements {
  private readonly select;
  private readonly touch;
  private readonly insertRow;

  constructor(db: Executor, sqlite: Sqlite.Database) {
    this.select = prepareQuery<{ id: string }, SubscriptionRow>(sqlite, (p) => db.selectFrom('subscriptions').selectAll().where('id', '=', p.id));
    this.touch = prepareQuery<{ id: string; now: number }>(sqlite, (p) =>
      db.updateTable('subscriptions').set({ last_active_ms: p.now }).where('id', '=', p.id),
    );
    this.insertRow = prepareQuery<NewSubscription>(sqlite, (p) =>
      db.insertInto('subscriptions').values({
        id: p.id,
        kind: p.kind,
        owner_connection_id: p.owner_connection_id,
        credential_name: p.credential_name,
        created_ms: p.created_ms,
        last_active_ms: p.last_active_ms,
      }),
    );
  }

  find(id: string): SubscriptionRow | undefined {
    return this.select.get({ id });
  }

  touched(id: string, now: number): void {
    this.touch.run({ id, now });
  }

  insert(row: NewSubscription): void {
    this.insertRow.run(row);
  }
}
