/** Callers: every identity that has talked to the hub, with the stable ConnectionId it was given. */
import type { Kysely } from 'kysely';
import type { CallerRow, Database } from '../db/schema.js';

type Executor = Kysely<Database>;

export async function findCaller(db: Executor, friendlyName: string): Promise<CallerRow | undefined> {
  return db.selectFrom('callers').selectAll().where('friendly_name', '=', friendlyName).executeTakeFirst();
}

export async function insertCaller(db: Executor, caller: CallerRow): Promise<void> {
  await db.insertInto('callers').values(caller).onConflict((oc) => oc.column('friendly_name').doNothing()).execute();
}
