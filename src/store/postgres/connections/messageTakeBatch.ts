/**
 * Polls' message takes on PostgreSQL in batches (issue 22: one send to All wakes every idle poll, and
 * a take each, several round trips, queued them through the pool's few connections; takeBatch.ts
 * gathers the takes of one wake-up). For the common case, a claimed take of a subscription with no
 * pending delivery, one repeatable-read transaction serves the whole batch in a fixed number of round
 * trips: it reads every subscription's addresses and cursor, and the log once above the lowest cursor;
 * keeps for each what is addressed to it, as messages.ts does one by one; then moves the cursors and
 * leaves each delivery pending under its take's claim (with the saga requests it delivers) in one
 * statement. A take whose subscription has a delivery pending (to be judged), whose client left, or
 * whose unread part of the log is longer than the batch reads goes the single way (messages.ts). A
 * concurrent change of a row it writes (a newer poll of one of its subscriptions elsewhere) fails the
 * batch with a serialization failure: its takes then run again one by one.
 */
import type pg from 'pg';
import type { ClientSignal } from '../../../hub/polls/clientSignal.js';
import type { MessageAddresses } from '../../../hub/messageAddresses.js';
import { isAddressedTo } from '../../../hub/messageAddresses.js';
import type { Message, TakenMessages } from '../../../hub/ports/messages.js';
import { SAGA_RESPONSE_KEY } from '../../../hub/ports/messages.js';
import type { SubscriptionCallerRow, JoinedGroupRow } from '../../subscriptionAddresses.js';
import { hasConfiguredGroups, subscriptionAddresses } from '../../subscriptionAddresses.js';
import { transaction } from './transaction.js';

/** Log entries one batch reads at most (above its lowest cursor); a take that needs more goes alone. */
const READ = 4_096;

/** One take of a batch. */
export interface BatchedMessageTake {
  subscription: string;
  limit: number;
  token: string;
  abort: ClientSignal;
}

type Row = SubscriptionCallerRow & { id: string; configured: string[] | null; joined: JoinedGroupRow[] };

/** The columns as the port names them (`AS`), as messages.ts. */
export const MESSAGE_COLUMNS = `id, sender_connection_id as "senderConnectionId", sender_type as "senderType",
  sender_friendly_name as "senderFriendlyName", scope, args, saga_id as "sagaId", key, data, sent_ms as "sentMs"`;

/** A logged message as addressing sees it (its scope's args parsed only where a scope has any). */
export const isFor = (row: Message, to: MessageAddresses) =>
  isAddressedTo(
    {
      id: row.id,
      scope: row.scope,
      args: row.scope <= 3 ? (JSON.parse(row.args) as string[]) : [],
      senderConnectionId: row.senderConnectionId,
    },
    to,
  );

/** What the batch writes for its takes. */
interface Writes {
  delivered: { id: string; cursor: number; from: number; token: string }[];
  advanced: { id: string; cursor: number }[];
  sagas: { connectionId: string; sagaId: string }[];
}

/**
 * The takes in one transaction: for each, what it delivers, or undefined for the single path (see the
 * header). `once`: a serialization failure is thrown, not retried.
 */
export function takeMessageBatch(
  pool: pg.Pool,
  takes: BatchedMessageTake[],
  once: boolean,
): Promise<(TakenMessages | undefined)[]> {
  const ids = takes.map((t) => t.subscription);
  return transaction(
    pool,
    async (client) => {
      const subscriptions = await client.query<Row>({
        name: 'hub_batch_message_subscriptions',
        text: `select s.id, c.connection_id, c.friendly_name, c.kind, c.sentinel_name, c.package_name, s.read_message_id,
                 s.pending_token, s.pending_ms, s.redeliver_from,
                 (select array_agg(g.group_name) from package_instance_groups g
                   where g.sentinel_name = c.sentinel_name and g.instance_name = c.package_name) as configured,
                 coalesce((select json_agg(json_build_object('group_name', m.group_name, 'joined_after', m.joined_after))
                   from message_group_members m where m.subscription_id = s.id), '[]') as joined
               from subscriptions s join callers c on c.connection_id = s.owner_connection_id where s.id = any($1::text[])`,
        values: [ids],
      });
      const rowOf = new Map(subscriptions.rows.map((r) => [r.id, r]));
      const free = subscriptions.rows.filter((r) => r.pending_token === null);
      const lowest = Math.min(...free.map((r) => r.read_message_id));
      const log =
        free.length === 0
          ? []
          : (
              await client.query<Message>({
                name: 'hub_batch_message_log',
                text: `select ${MESSAGE_COLUMNS} from messages where id > $1 order by id limit ${READ}`,
                values: [lowest],
              })
            ).rows;
      const whole = log.length < READ;
      const writes: Writes = { delivered: [], advanced: [], sagas: [] };
      const results = takes.map((take): TakenMessages | undefined => {
        const row = rowOf.get(take.subscription);
        if (!row) return { messages: [], missed: 0 };
        if (row.pending_token !== null) return undefined;
        const to = subscriptionAddresses(row, hasConfiguredGroups(row.kind) ? (row.configured ?? []) : [], row.joined);
        const from = to.readMessageId;
        const messages: Message[] = [];
        let cursor = from;
        let missed = 0;
        for (let i = firstAbove(log, from); i < log.length; i++) {
          if (cursor === from && log[i].id > from + 1) missed = log[i].id - from - 1;
          cursor = log[i].id;
          if (isFor(log[i], to)) {
            messages.push(log[i]);
            if (take.limit > 0 && messages.length >= take.limit) break;
          }
        }
        const reachedEnd = !(take.limit > 0 && messages.length >= take.limit);
        // The log read ended before this take did, or its client left: the single way decides.
        if ((reachedEnd && !whole) || (messages.length > 0 && take.abort.aborted)) return undefined;
        if (messages.length > 0) {
          writes.delivered.push({ id: take.subscription, cursor, from, token: take.token });
          for (const m of messages) {
            if (m.sagaId !== null && m.key !== SAGA_RESPONSE_KEY)
              writes.sagas.push({ connectionId: to.connectionId, sagaId: m.sagaId });
          }
        } else if (cursor !== from) writes.advanced.push({ id: take.subscription, cursor });
        return { messages, missed };
      });
      await write(client, writes, Date.now());
      return results;
    },
    { isolation: 'repeatable read', once },
  );
}

/** The index of the first entry of `log` (ids ascending) above `id`. */
function firstAbove(log: Message[], id: number): number {
  let low = 0;
  let high = log.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (log[mid].id <= id) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** The cursors moved, the deliveries pending under their claims, the saga requests remembered: one statement. */
async function write(client: pg.PoolClient, writes: Writes, now: number): Promise<void> {
  const { delivered, advanced } = writes;
  if (delivered.length === 0 && advanced.length === 0) return;
  const sagas = [...new Map(writes.sagas.map((s) => [`${s.connectionId}\u0000${s.sagaId}`, s])).values()];
  // A concurrent take's update of one of these rows fails the batch (40001).
  await client.query({
    name: 'hub_batch_message_deliver',
    text: `with delivered as (
             update subscriptions s set read_message_id = d.cursor, last_active_ms = $1, redeliver_from = d.from_id,
               pending_token = d.token, pending_ms = $1
             from unnest($2::text[], $3::bigint[], $4::bigint[], $5::text[]) as d(id, cursor, from_id, token)
             where s.id = d.id returning s.id),
           advanced as (
             update subscriptions s set read_message_id = a.cursor, pending_token = null
             from unnest($6::text[], $7::bigint[]) as a(id, cursor) where s.id = a.id returning s.id),
           remembered as (
             insert into saga_requests (connection_id, saga_id, received_ms)
             select c, g, $1 from unnest($8::text[], $9::text[]) as r(c, g)
             on conflict (connection_id, saga_id) do update set received_ms = excluded.received_ms returning 1)
           select (select count(*) from delivered) + (select count(*) from advanced) + (select count(*) from remembered) as n`,
    values: [
      now,
      delivered.map((d) => d.id),
      delivered.map((d) => d.cursor),
      delivered.map((d) => d.from),
      delivered.map((d) => d.token),
      advanced.map((a) => a.id),
      advanced.map((a) => a.cursor),
      sagas.map((s) => s.connectionId),
      sagas.map((s) => s.sagaId),
    ],
  });
}
