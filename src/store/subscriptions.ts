/** Subscriptions (StateObject and message), their filters and joined message groups. */
import type Sqlite from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { prepareQuery } from '../db/prepared.js';
import { sql } from 'kysely';
import type { Database, SubscriptionRow } from '../db/schema.js';
import type { StateObjectGlobs } from './stateObjects.js';

type Executor = Kysely<Database>;

export async function findSubscription(db: Executor, id: string): Promise<SubscriptionRow | undefined> {
  return db.selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function insertSubscription(
  db: Executor,
  row: Omit<SubscriptionRow, 'queued_messages'>,
): Promise<void> {
  await db.insertInto('subscriptions').values(row).execute();
}

export async function touchSubscription(db: Executor, id: string, now: number): Promise<void> {
  await db.updateTable('subscriptions').set({ last_active_ms: now }).where('id', '=', id).execute();
}

/** Adds a filter unless the subscription already has exactly that one; true when added. */
export async function addStateObjectFilter(
  db: Executor,
  subscriptionId: string,
  globs: StateObjectGlobs,
  exactName: string | null,
): Promise<boolean> {
  const existing = await db
    .selectFrom('state_object_filters')
    .select('id')
    .where('subscription_id', '=', subscriptionId)
    .where('sentinel_glob', '=', globs.sentinel)
    .where('package_glob', '=', globs.package)
    .where('name_glob', '=', globs.name)
    .where('type_glob', '=', globs.type)
    .executeTakeFirst();
  if (existing) return false;
  await db
    .insertInto('state_object_filters')
    .values({
      subscription_id: subscriptionId,
      sentinel_glob: globs.sentinel,
      package_glob: globs.package,
      name_glob: globs.name,
      type_glob: globs.type,
      exact_name: exactName,
    })
    .execute();
  return true;
}

export async function joinMessageGroup(db: Executor, subscriptionId: string, group: string): Promise<void> {
  await db
    .insertInto('message_group_members')
    .values({ subscription_id: subscriptionId, group_name: group })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

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

/** Looking up and touching a subscription on the poll path, run inside a batch transaction. */
export class SubscriptionStatements {
  private readonly select;
  private readonly touch;

  constructor(db: Executor, sqlite: Sqlite.Database) {
    this.select = prepareQuery<{ id: string }, SubscriptionRow>(sqlite, (p) => db.selectFrom('subscriptions').selectAll().where('id', '=', p.id));
    this.touch = prepareQuery<{ id: string; now: number }>(sqlite, (p) =>
      db.updateTable('subscriptions').set({ last_active_ms: p.now }).where('id', '=', p.id),
    );
  }

  find(id: string): SubscriptionRow | undefined {
    return this.select.get({ id });
  }

  touched(id: string, now: number): void {
    this.touch.run({ id, now });
  }
}
