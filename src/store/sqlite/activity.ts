/** Per-instance activity for the console's overview on SQLite (the ActivityStore): read-only aggregates. */
import type { Db } from './database/open.js';
import type { SentMessage } from '../../hub/messageAddresses.js';
import type { ActivityStore, InstanceActivity } from '../../hub/ports/activity.js';
import type { InstanceKey } from '../../hub/ports/descriptors.js';
import { COUNTED_LOG_ENTRIES, activityPerInstance } from '../instanceActivity.js';

export class SqliteActivityStore implements ActivityStore {
  constructor(private readonly db: Db) {}

  async instances(): Promise<InstanceActivity> {
    const [stateObjects, subscriptions, logs] = await Promise.all([
      stateObjectCounts(this.db),
      subscriptionActivity(this.db),
      lastLogs(this.db),
    ]);
    return { stateObjects, subscriptions, lastLogs: logs };
  }
}

async function stateObjectCounts(db: Db): Promise<(InstanceKey & { n: number })[]> {
  return db
    .selectFrom('state_objects')
    .select(['sentinel_name as sentinelName', 'package_name as packageName', (eb) => eb.fn.countAll<number>().as('n')])
    .where('is_deleted', '=', 0)
    .groupBy(['sentinel_name', 'package_name'])
    .execute();
}

/**
 * Unread messages and the last poll or subscribe, per caller identity (package callers and consumers).
 * Unread: log entries above a message subscription's cursor that are addressed to it (among the newest
 * COUNTED_LOG_ENTRIES), plus deliveries still pending from before the log (migration 0003).
 */
async function subscriptionActivity(db: Db): Promise<(InstanceKey & { queued: number; lastActiveMs: number })[]> {
  const subscriptions = await db
    .selectFrom('subscriptions')
    .innerJoin('callers', 'callers.connection_id', 'subscriptions.owner_connection_id')
    .select([
      'subscriptions.id',
      'subscriptions.kind',
      'subscriptions.read_message_id',
      'subscriptions.last_active_ms',
      'callers.connection_id',
      'callers.friendly_name',
      'callers.kind as caller_kind',
      'callers.sentinel_name',
      'callers.package_name',
    ])
    .execute();
  const joined = await db
    .selectFrom('message_group_members')
    .select(['subscription_id', 'group_name', 'joined_after'])
    .execute();
  const configured = await db
    .selectFrom('package_instance_groups')
    .select(['sentinel_name', 'instance_name', 'group_name'])
    .execute();
  const legacy = await db
    .selectFrom('message_deliveries')
    .select(['subscription_id', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('subscription_id')
    .execute();
  const top = await db
    .selectFrom('messages')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  const from = Math.max(0, Number(top?.id ?? 0) - COUNTED_LOG_ENTRIES);
  const log: SentMessage[] = (
    await db
      .selectFrom('messages')
      .select(['id', 'scope', 'args', 'sender_connection_id'])
      .where('id', '>', from)
      .orderBy('id')
      .execute()
  ).map((m) => ({
    id: m.id,
    scope: m.scope,
    args: JSON.parse(m.args) as string[],
    senderConnectionId: m.sender_connection_id,
  }));
  const legacyBy = new Map(legacy.map((l) => [l.subscription_id, Number(l.n)]));
  return activityPerInstance({ subscriptions, joined, configured, log }, (id) => legacyBy.get(id) ?? 0);
}

/** The newest WriteLog entry of each instance that wrote one. */
async function lastLogs(db: Db): Promise<InstanceActivity['lastLogs']> {
  const newest = db
    .selectFrom('package_logs')
    .select((eb) => eb.fn.max('id').as('id'))
    .groupBy(['sentinel_name', 'package_name']);
  return db
    .selectFrom('package_logs')
    .select([
      'sentinel_name as sentinelName',
      'package_name as packageName',
      'level',
      'message',
      'logged_ms as loggedMs',
    ])
    .where('id', 'in', newest)
    .execute();
}
