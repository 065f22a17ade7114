/** Per-instance activity for the console's overview on SQLite (the ActivityStore): read-only aggregates. */
import type { Db } from '../../db/open.js';
import type { SentMessage, MessageAddresses } from '../../hub/messageAddresses.js';
import { isAddressedTo } from '../../hub/messageAddresses.js';
import type { ActivityStore, InstanceActivity } from '../../hub/ports/activity.js';
import type { InstanceKey } from '../../hub/ports/descriptors.js';

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

/** Unread messages are counted over this many of the newest log entries at most (a console view, not a scan of the log). */
const COUNTED_LOG_ENTRIES = 10_000;

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
  const result = new Map<string, InstanceKey & { queued: number; lastActiveMs: number }>();
  for (const s of subscriptions) {
    const key = `${s.sentinel_name}\u0000${s.package_name}`;
    let entry = result.get(key);
    if (!entry)
      result.set(
        key,
        (entry = { sentinelName: s.sentinel_name, packageName: s.package_name, queued: 0, lastActiveMs: 0 }),
      );
    entry.lastActiveMs = Math.max(entry.lastActiveMs, s.last_active_ms);
    if (s.kind !== 'messages') continue;
    const isPackage = s.caller_kind === 'package';
    const groups = new Map<string, number>();
    if (isPackage)
      for (const g of configured)
        if (g.sentinel_name === s.sentinel_name && g.instance_name === s.package_name) groups.set(g.group_name, 0);
    for (const g of joined)
      if (g.subscription_id === s.id && !groups.has(g.group_name)) groups.set(g.group_name, g.joined_after);
    const to: MessageAddresses = {
      connectionId: s.connection_id,
      friendlyName: s.friendly_name,
      isPackage,
      sentinelName: s.sentinel_name,
      packageName: s.package_name,
      groups,
    };
    entry.queued +=
      (legacyBy.get(s.id) ?? 0) + log.filter((m) => m.id > s.read_message_id && isAddressedTo(m, to)).length;
  }
  return [...result.values()];
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
