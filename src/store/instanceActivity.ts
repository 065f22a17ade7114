/**
 * The console's unread messages and last activity per caller identity, from the rows both engines'
 * ActivityStores read in one snapshot. Unread: log entries above a message subscription's cursor that
 * are addressed to it, among the newest entries the store read.
 */
import type { SentMessage } from '../hub/messageAddresses.js';
import { isAddressedTo } from '../hub/messageAddresses.js';
import type { InstanceActivity } from '../hub/ports/activity.js';
import type { CallerNamesRow, JoinedGroupRow } from './subscriptionAddresses.js';
import { hasConfiguredGroups, messageAddresses } from './subscriptionAddresses.js';

/** Unread messages are counted over this many of the newest log entries at most (a console view, not a scan of the log). */
export const COUNTED_LOG_ENTRIES = 10_000;

export interface ActivityRows {
  /** Every subscription joined to its caller (`kind` is the subscription's, `caller_kind` the caller's). */
  subscriptions: (CallerNamesRow & {
    id: string;
    kind: string;
    read_message_id: number;
    last_active_ms: number;
    caller_kind: string;
  })[];
  joined: (JoinedGroupRow & { subscription_id: string })[];
  configured: { sentinel_name: string; instance_name: string; group_name: string }[];
  /** The newest COUNTED_LOG_ENTRIES messages, oldest first. */
  log: SentMessage[];
}

/**
 * Per caller identity: its subscriptions' unread messages and latest activity; `pendingBeforeTheLog`
 * adds what a subscription still has pending from before the log (SQLite's migration 0003).
 */
export function activityPerInstance(
  rows: ActivityRows,
  pendingBeforeTheLog: (subscriptionId: string) => number = () => 0,
): InstanceActivity['subscriptions'] {
  const result = new Map<string, InstanceActivity['subscriptions'][number]>();
  for (const s of rows.subscriptions) {
    const key = `${s.sentinel_name}\u0000${s.package_name}`;
    let entry = result.get(key);
    if (!entry)
      result.set(
        key,
        (entry = { sentinelName: s.sentinel_name, packageName: s.package_name, queued: 0, lastActiveMs: 0 }),
      );
    entry.lastActiveMs = Math.max(entry.lastActiveMs, s.last_active_ms);
    if (s.kind !== 'messages') continue;
    const isPackage = hasConfiguredGroups(s.caller_kind);
    const configured = isPackage
      ? rows.configured
          .filter((g) => g.sentinel_name === s.sentinel_name && g.instance_name === s.package_name)
          .map((g) => g.group_name)
      : [];
    const to = messageAddresses(
      s,
      isPackage,
      configured,
      rows.joined.filter((g) => g.subscription_id === s.id),
    );
    entry.queued +=
      pendingBeforeTheLog(s.id) + rows.log.filter((m) => m.id > s.read_message_id && isAddressedTo(m, to)).length;
  }
  return [...result.values()];
}
