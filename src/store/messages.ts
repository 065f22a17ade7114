/** Messages, fanned out at send time into one delivery row per target subscription. */
import type { Expression, ExpressionBuilder, Kysely, SqlBool } from 'kysely';
import type { Database, MessageRow } from '../db/schema.js';

type Executor = Kysely<Database>;

/** Who a message reaches, as resolved from its scope (hub/scope.ts). */
export type MessageTarget =
  | { kind: 'all' }
  | { kind: 'others'; senderConnectionId: string }
  | { kind: 'group'; groups: string[] }
  | { kind: 'sentinel'; sentinels: string[] }
  | { kind: 'package'; friendlyNames: string[]; packageNames: string[]; connectionIds: string[] };

type TargetScope = ExpressionBuilder<Database & { c: Database['callers']; s: Database['subscriptions'] }, 's' | 'c'>;

function targetCondition(eb: TargetScope, target: MessageTarget): Expression<SqlBool> {
  switch (target.kind) {
    case 'all':
      return eb.lit(true);
    case 'others':
      return eb('s.owner_connection_id', '!=', target.senderConnectionId);
    case 'group':
      return eb.or([
        eb(
          's.id',
          'in',
          eb.selectFrom('message_group_members').select('subscription_id').where('group_name', 'in', target.groups),
        ),
        eb.and([
          eb('c.kind', '=', 'package'),
          eb.exists(
            eb
              .selectFrom('package_instance_groups as g')
              .select('g.group_name')
              .whereRef('g.sentinel_name', '=', 'c.sentinel_name')
              .whereRef('g.instance_name', '=', 'c.package_name')
              .where('g.group_name', 'in', target.groups),
          ),
        ]),
      ]);
    case 'sentinel':
      return eb('c.sentinel_name', 'in', target.sentinels);
    case 'package': {
      const any: Expression<SqlBool>[] = [];
      if (target.friendlyNames.length) any.push(eb('c.friendly_name', 'in', target.friendlyNames));
      if (target.connectionIds.length) any.push(eb('c.connection_id', 'in', target.connectionIds));
      if (target.packageNames.length) {
        any.push(eb.and([eb('c.kind', '=', 'package'), eb('c.package_name', 'in', target.packageNames)]));
      }
      return any.length ? eb.or(any) : eb.lit(false);
    }
  }
}

export type NewMessage = Omit<MessageRow, 'id'>;

/**
 * Stores the message and queues it for every target subscription; returns those subscriptions.
 * A message that reaches nobody is not kept. Call inside a transaction.
 */
export async function queueMessage(db: Executor, message: NewMessage, target: MessageTarget): Promise<string[]> {
  const { id } = await db.insertInto('messages').values(message).returning('id').executeTakeFirstOrThrow();
  const rows = await db
    .insertInto('message_deliveries')
    .columns(['subscription_id', 'message_id'])
    .expression((eb) =>
      eb
        .selectFrom('subscriptions as s')
        .innerJoin('callers as c', 'c.connection_id', 's.owner_connection_id')
        .select(['s.id as subscription_id', eb.val(id).as('message_id')])
        .where('s.kind', '=', 'messages')
        .where((w) => targetCondition(w as unknown as TargetScope, target)),
    )
    .returning('subscription_id')
    .execute();
  if (rows.length === 0) await db.deleteFrom('messages').where('id', '=', id).execute();
  return rows.map((r) => r.subscription_id);
}

/**
 * Drops the oldest deliveries of the given subscriptions beyond `limit` queued messages; returns how
 * many were dropped. Call inside the transaction that queued.
 */
export async function boundQueues(db: Executor, subscriptionIds: string[], limit: number): Promise<number> {
  let dropped = 0;
  for (let i = 0; i < subscriptionIds.length; i += 500) {
    const full = await db
      .selectFrom('subscriptions')
      .select(['id', 'queued_messages'])
      .where('id', 'in', subscriptionIds.slice(i, i + 500))
      .where('queued_messages', '>', limit)
      .execute();
    for (const sub of full) {
      const excess = sub.queued_messages - limit;
      const result = await db
        .deleteFrom('message_deliveries')
        .where(
          'id',
          'in',
          db
            .selectFrom('message_deliveries')
            .select('id')
            .where('subscription_id', '=', sub.id)
            .orderBy('id')
            .limit(excess),
        )
        .executeTakeFirst();
      dropped += Number(result.numDeletedRows);
    }
  }
  if (dropped > 0) await deleteOrphanMessages(db);
  return dropped;
}

/** Reads and removes the oldest `limit` (0 = all) messages queued for a subscription. */
export async function takeMessages(db: Executor, subscriptionId: string, limit: number): Promise<MessageRow[]> {
  let query = db
    .selectFrom('message_deliveries as d')
    .innerJoin('messages as m', 'm.id', 'd.message_id')
    .select([
      'd.id as delivery_id',
      'm.id',
      'm.sender_connection_id',
      'm.sender_type',
      'm.sender_friendly_name',
      'm.scope',
      'm.args',
      'm.saga_id',
      'm.key',
      'm.data',
      'm.sent_ms',
    ])
    .where('d.subscription_id', '=', subscriptionId)
    .orderBy('d.id');
  if (limit > 0) query = query.limit(limit);
  const rows = await query.execute();
  if (rows.length === 0) return [];
  await db
    .deleteFrom('message_deliveries')
    .where('subscription_id', '=', subscriptionId)
    .where('id', '<=', rows[rows.length - 1].delivery_id)
    .execute();
  await db
    .deleteFrom('messages')
    .where('id', 'in', rows.map((r) => r.id))
    .where((eb) =>
      eb.not(eb.exists(eb.selectFrom('message_deliveries as d').select('d.id').whereRef('d.message_id', '=', 'messages.id'))),
    )
    .execute();
  return rows.map(({ delivery_id: _, ...message }) => message);
}

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
