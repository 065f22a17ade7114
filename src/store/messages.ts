/** Messages, fanned out at send time into one delivery row per target subscription. */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

type Executor = Kysely<Database>;

/** Who a message reaches, as resolved from its scope (hub/scope.ts). */
export type MessageTarget =
  | { kind: 'all' }
  | { kind: 'others'; senderConnectionId: string }
  | { kind: 'group'; groups: string[] }
  | { kind: 'sentinel'; sentinels: string[] }
  | { kind: 'package'; friendlyNames: string[]; packageNames: string[]; connectionIds: string[] };

/** Messages whose every delivery is gone (consumed, dropped, or their subscription expired). */
export async function deleteOrphanMessages(db: Executor): Promise<void> {
  await db
    .deleteFrom('messages')
    .where((eb) =>
      eb.not(eb.exists(eb.selectFrom('message_deliveries as d').select('d.id').whereRef('d.message_id', '=', 'messages.id'))),
    )
    .execute();
}

export async function countQueuedMessages(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('message_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
