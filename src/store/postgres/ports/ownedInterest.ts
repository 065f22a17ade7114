/**
 * What a poll reads first on PostgreSQL (SubscriptionStore.findOwned): the owner's subscription of a
 * kind, marked active, with what it listens for (its filters, or its caller's message addresses), in
 * one statement: one round trip where a transaction of its five statements took seven (a thousand polls
 * arriving at once queue for the process's connections that much less).
 */
import type pg from 'pg';
import type { SubscriptionInterest, SubscriptionKind, SubscriptionOwner } from '../../../hub/ports/subscriptions.js';
import type { JoinedGroupRow, SubscriptionCallerRow } from '../../subscriptionAddresses.js';
import { hasConfiguredGroups, subscriptionAddresses } from '../../subscriptionAddresses.js';
import { query } from '../connections/transaction.js';

/** $1 id, $2 kind, $3 owner's connection, $4 credential, $5 now: the update marks it active only if it is theirs. */
const OWNED = `with s as (update subscriptions set last_active_ms = $5
    where id = $1 and kind = $2 and owner_connection_id = $3 and credential_name = $4 returning *)`;
/** Its filters in the order they were added (one row of nulls: none). */
const OWNED_FILTERS = `${OWNED} select f.sentinel_pattern, f.package_pattern, f.name_pattern, f.type_pattern
  from s left join state_object_filters f on f.subscription_id = s.id order by f.id`;
/** Its caller's names and groups (as messageSubscriptions.ts addressesOf reads them inside a take). */
const OWNED_CALLER = `${OWNED} select c.connection_id, c.friendly_name, c.kind, c.sentinel_name, c.package_name,
    s.read_message_id, s.pending_token, s.pending_ms, s.redeliver_from,
    array(select g.group_name from package_instance_groups g
      where g.sentinel_name = c.sentinel_name and g.instance_name = c.package_name) as configured,
    array(select json_build_object('group_name', m.group_name, 'joined_after', m.joined_after)
      from message_group_members m where m.subscription_id = s.id) as joined
  from s join callers c on c.connection_id = s.owner_connection_id`;

/** A filter's patterns; all null in the one row of a subscription without filters. */
type FilterPatternRow = {
  sentinel_pattern: string;
  package_pattern: string;
  name_pattern: string;
  type_pattern: string;
};
type OwnedCallerRow = SubscriptionCallerRow & { configured: string[]; joined: JoinedGroupRow[] };

/** The owner's subscription of that kind, marked active, with what it listens for; undefined when not theirs. */
export async function findOwned(
  pool: pg.Pool,
  owner: SubscriptionOwner,
  id: string,
  kind: SubscriptionKind,
): Promise<SubscriptionInterest | undefined> {
  const values = [id, kind, owner.connectionId, owner.credentialName, Date.now()];
  if (kind === 'state_objects') {
    const rows = await query<FilterPatternRow>(pool, OWNED_FILTERS, values);
    if (rows.length === 0) return undefined;
    const filters = rows
      .filter((r) => r.sentinel_pattern !== null)
      .map((r) => ({
        sentinel: r.sentinel_pattern,
        package: r.package_pattern,
        name: r.name_pattern,
        type: r.type_pattern,
      }));
    return { kind, filters };
  }
  const [row] = await query<OwnedCallerRow>(pool, OWNED_CALLER, values);
  if (!row) return undefined;
  const configured = hasConfiguredGroups(row.kind) ? row.configured : [];
  return { kind, addresses: subscriptionAddresses(row, configured, row.joined) };
}
