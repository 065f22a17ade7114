/** The message log read outside the hot paths (metrics). */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

type Executor = Kysely<Database>;

export async function countQueuedMessages(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('messages')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
