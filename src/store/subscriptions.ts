/** Subscriptions (StateObject and message), their filters and joined message groups. */
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Database } from '../db/schema.js';
import { writeHubSetting } from './configuration.js';
import type { ExpiredSubscription } from './engine.js';
import { deleteTombstones } from './stateObjects.js';

type Executor = Kysely<Database>;


/** Removes subscriptions idle since before `cutoff`, except `keep` (those with a waiting poll); says whose they were. */
export async function deleteIdleSubscriptions(db: Executor, cutoff: number, keep: string[]): Promise<ExpiredSubscription[]> {
  let query = db.deleteFrom('subscriptions').where('last_active_ms', '<', cutoff);
  if (keep.length > 0 && keep.length < 30_000) query = query.where('id', 'not in', keep);
  const rows = await query
    .returning(['id', 'kind', 'credential_name', (eb) =>
      eb.selectFrom('callers').select('friendly_name').whereRef('callers.connection_id', '=', 'subscriptions.owner_connection_id').as('friendly_name')])
    .execute();
  return rows.map((r) => ({ id: r.id, kind: r.kind, credentialName: r.credential_name, friendlyName: r.friendly_name ?? '' }));
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

/** The hub setting that records the last moment the hub was alive (idle time counts only while it runs). */
export const HEARTBEAT_KEY = 'heartbeat_ms';

/**
 * One housekeeping transaction: records the heartbeat, removes subscriptions idle since before
 * `idleCutoff` (except `keep`, those with a waiting poll) and tombstones past `tombstoneCutoff` or
 * passed by every cursor. Returns the subscriptions removed.
 */
export async function sweepSubscriptions(
  db: Executor,
  now: number,
  idleCutoff: number,
  keep: string[],
  tombstoneCutoff: number,
): Promise<ExpiredSubscription[]> {
  return db.transaction().execute(async (trx) => {
    await writeHubSetting(trx, HEARTBEAT_KEY, String(now));
    const gone = await deleteIdleSubscriptions(trx, idleCutoff, keep);
    await deleteTombstones(trx, tombstoneCutoff);
    return gone;
  });
}
