/** Callers: every identity that has talked to the hub, with the stable ConnectionId it was given. */
import type { Kysely } from 'kysely';
import type { CallerRow, Database } from '../db/schema.js';

type Executor = Kysely<Database>;

export async function findCaller(db: Executor, friendlyName: string): Promise<CallerRow | undefined> {
  return db.selectFrom('callers').selectAll().where('friendly_name', '=', friendlyName).executeTakeFirst();
}

/**
 * Records the caller unless its friendly name is known already; either way returns the ConnectionId
 * on record. (The no-op update on conflict is what makes RETURNING give the existing row.)
 */
export async function recordCaller(db: Executor, caller: CallerRow): Promise<string> {
  const row = await db
    .insertInto('callers')
    .values(caller)
    .onConflict((oc) => oc.column('friendly_name').doUpdateSet((eb) => ({ friendly_name: eb.ref('excluded.friendly_name') })))
    .returning('connection_id')
    .executeTakeFirstOrThrow();
  return row.connection_id;
}
