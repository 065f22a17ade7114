/**
 * What a message subscription reads on PostgreSQL, inside a transaction: its caller's addresses and
 * groups, its cursor and its pending delivery; and the log's head (a new cursor's start).
 */
import type pg from 'pg';
import type { MessageAddresses } from '../../../hub/messageAddresses.js';
import type { JoinedGroupRow, SubscriptionCallerRow, SubscriptionCursor } from '../../subscriptionAddresses.js';
import { hasConfiguredGroups, subscriptionAddresses } from '../../subscriptionAddresses.js';

/** Inside a transaction: the subscription's caller names and groups, its cursor and what is pending. */
export async function addressesOf(
  client: pg.PoolClient,
  subscription: string,
): Promise<(MessageAddresses & SubscriptionCursor) | undefined> {
  const { rows } = await client.query<SubscriptionCallerRow>({
    name: 'hub_subscription_caller',
    text: `select c.connection_id, c.friendly_name, c.kind, c.sentinel_name, c.package_name, s.read_message_id,
             s.pending_token, s.pending_ms, s.redeliver_from
           from subscriptions s join callers c on c.connection_id = s.owner_connection_id where s.id = $1`,
    values: [subscription],
  });
  const c = rows[0];
  if (!c) return undefined;
  const configured = hasConfiguredGroups(c.kind)
    ? await client.query<{ group_name: string }>({
        name: 'hub_configured_groups',
        text: 'select group_name from package_instance_groups where sentinel_name = $1 and instance_name = $2',
        values: [c.sentinel_name, c.package_name],
      })
    : undefined;
  const joined = await client.query<JoinedGroupRow>({
    name: 'hub_joined_groups',
    text: 'select group_name, joined_after from message_group_members where subscription_id = $1',
    values: [subscription],
  });
  return subscriptionAddresses(c, configured?.rows.map((g) => g.group_name) ?? [], joined.rows);
}

/** The message log's head: the last id given (a new subscription's cursor, a joined group's start). */
export async function messageHead(client: pg.ClientBase | pg.Pool): Promise<number> {
  const { rows } = await client.query<{ seq: number }>({
    name: 'hub_message_head',
    text: `select seq from log_heads where log = 'messages'`,
  });
  return rows[0].seq;
}
