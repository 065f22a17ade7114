/**
 * What both engines read first for a message subscription's take, turned into what the take works
 * with: the addresses the domain tests each message against (hub/messageAddresses.ts), the cursor and
 * the pending delivery. Each engine has its own SQL; the rule from rows to addresses is here once.
 */
import type { MessageAddresses } from '../hub/messageAddresses.js';

/** A caller's names as its row has them. */
export interface CallerNamesRow {
  connection_id: string;
  friendly_name: string;
  sentinel_name: string;
  package_name: string;
}

/** The subscription's row joined to its caller's (callers `c`, subscriptions `s`). */
export interface SubscriptionCallerRow extends CallerNamesRow {
  kind: string;
  read_message_id: number;
  pending_token: string | null;
  pending_ms: number | null;
  redeliver_from: number | null;
}

/** A group the subscription joined, and the last message id before it did. */
export interface JoinedGroupRow {
  group_name: string;
  joined_after: number;
}

/** A message subscription's cursor and its pending delivery (PendingDelivery), as its row has them. */
export interface SubscriptionCursor {
  readMessageId: number;
  pendingToken: string | null;
  pendingMs: number | null;
  redeliverFrom: number | null;
}

/** A package instance's subscription is also addressed through the groups its configuration gives it. */
export const hasConfiguredGroups = (callerKind: string) => callerKind === 'package';

/** A configured group reaches from the start of the log (0), even when also joined; a joined one from when it joined. */
function groupsOf(configuredGroups: string[], joinedGroups: JoinedGroupRow[]): Map<string, number> {
  const groups = new Map<string, number>();
  for (const group of configuredGroups) groups.set(group, 0);
  for (const g of joinedGroups) if (!groups.has(g.group_name)) groups.set(g.group_name, g.joined_after);
  return groups;
}

/** What a message subscription of `caller` answers to (groups: see groupsOf). */
export function messageAddresses(
  caller: CallerNamesRow,
  isPackage: boolean,
  configuredGroups: string[],
  joinedGroups: JoinedGroupRow[],
): MessageAddresses {
  return {
    connectionId: caller.connection_id,
    friendlyName: caller.friendly_name,
    isPackage,
    sentinelName: caller.sentinel_name,
    packageName: caller.package_name,
    groups: groupsOf(configuredGroups, joinedGroups),
  };
}

/**
 * The addresses, cursor and pending delivery of `row`'s subscription. One object literal, not a spread
 * of messageAddresses: every take builds one, and the spread's copy cost the SQLite message take
 * about 1.6 KB of garbage and a slower object (measured: bench/fanoutAB.ts msgpaired).
 */
export function subscriptionAddresses(
  row: SubscriptionCallerRow,
  configuredGroups: string[],
  joinedGroups: JoinedGroupRow[],
): MessageAddresses & SubscriptionCursor {
  return {
    connectionId: row.connection_id,
    friendlyName: row.friendly_name,
    isPackage: hasConfiguredGroups(row.kind),
    sentinelName: row.sentinel_name,
    packageName: row.package_name,
    groups: groupsOf(configuredGroups, joinedGroups),
    readMessageId: row.read_message_id,
    pendingToken: row.pending_token,
    pendingMs: row.pending_ms,
    redeliverFrom: row.redeliver_from,
  };
}
