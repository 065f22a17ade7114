/**
 * A poll's take of a StateObject subscription on PostgreSQL, the single way (stateObjects.ts: a take
 * with no delivery pending goes with its wake-up's others, connections/stateObjectTakeBatch.ts), as one
 * sequence inside the caller's repeatable-read transaction: read the subscription's pending delivery
 * and judge it by the claim (ports/deliveryClaim.ts: `wait` takes nothing, `redeliver` moves the
 * cursors back before it, any other verdict ends it); read each filter above its cursor up to the
 * log's head; keep the oldest `limit` changed objects; then move the cursors and leave what it
 * delivers pending under the claim's token, or, delivering nothing, move the cursors to the head.
 * Settling a pending delivery later is pendingDeliveries.ts.
 */
import type pg from 'pg';
import { ClientGone } from '../../../errors.js';
import type { ClientSignal } from '../../../hub/polls/clientSignal.js';
import type { DeliveryClaim } from '../../../hub/ports/deliveryClaim.js';
import { judgePending } from '../../../hub/ports/deliveryClaim.js';
import type { StateObject, TakenStateObject, TakenStateObjects } from '../../../hub/ports/stateObjects.js';
import { restoreFilters } from './pendingDeliveries.js';

/** The columns as the port names them (`AS`): the rows reach the wire records as they are. */
export const COLUMNS = `sentinel_name as "sentinelName", package_name as "packageName", name, type, value, metadatas,
  last_update_ms as "lastUpdateMs", lifetime_s as "lifetimeS"`;
type StateObjectRow = StateObject & { seq: number; isDeleted: boolean };
type FilterRow = {
  sentinel_like: string;
  package_like: string;
  name_like: string;
  type_like: string;
  exact_name: string | null;
  read_seq: number;
  created_seq: number;
};

const UNREAD = `seq > $2 and seq <= $3 and sentinel_name like $4 and package_name like $5 and type like $6 and (not is_deleted or seq > $7)`;
const READ_EXACT = `select ${COLUMNS}, seq, is_deleted as "isDeleted" from state_objects where name = $1 and ${UNREAD} order by seq`;
const READ_LIKE = `select ${COLUMNS}, seq, is_deleted as "isDeleted" from state_objects where name like $1 and ${UNREAD} order by seq`;

export async function takeStateObjects(
  client: pg.PoolClient,
  subscription: string,
  limit: number,
  abort: ClientSignal,
  claim: DeliveryClaim | undefined,
): Promise<TakenStateObjects> {
  const pending = await client.query<{ pending_token: string | null; pending_ms: number | null }>({
    name: 'hub_pending_of',
    text: 'select pending_token, pending_ms from subscriptions where id = $1',
    values: [subscription],
  });
  const row = pending.rows[0];
  const judged = row ? judgePending(claim, row.pending_token, row.pending_ms, Date.now()) : undefined;
  if (judged?.verdict === 'wait') return { objects: [], judged };
  if (judged?.verdict === 'redeliver') await restoreFilters(client, subscription);
  if (judged) {
    await client.query({
      name: 'hub_pending_clear',
      text: 'update subscriptions set pending_token = null where id = $1',
      values: [subscription],
    });
  }
  const top = await headOf(client);
  const filters = (
    await client.query<FilterRow>({
      name: 'hub_take_filters',
      text: `select sentinel_like, package_like, name_like, type_like, exact_name, read_seq, created_seq
           from state_object_filters where subscription_id = $1 order by id`,
      values: [subscription],
    })
  ).rows;
  const found = new Map<number, StateObjectRow>();
  for (const f of filters) {
    if (f.read_seq >= top) continue;
    const exact = f.exact_name !== null;
    const { rows } = await client.query<StateObjectRow>({
      name: exact ? 'hub_take_exact' : 'hub_take_like',
      text: exact ? READ_EXACT : READ_LIKE,
      values: [
        exact ? f.exact_name : f.name_like,
        f.read_seq,
        top,
        f.sentinel_like,
        f.package_like,
        f.type_like,
        f.created_seq,
      ],
    });
    for (const row of rows) found.set(row.seq, row);
  }
  let rows = [...found.values()].sort((a, b) => a.seq - b.seq);
  let readUpTo = top;
  if (limit > 0 && rows.length > limit) {
    rows = rows.slice(0, limit);
    readUpTo = rows[rows.length - 1].seq;
  }
  if (rows.length > 0) {
    if (abort.aborted) throw new ClientGone();
    // Active now, and pending under the claim until its answer is written.
    const now = Date.now();
    await client.query({
      name: 'hub_pending_deliver_filters',
      text: 'update state_object_filters set redeliver_seq = read_seq, read_seq = greatest(read_seq, $2) where subscription_id = $1',
      values: [subscription, readUpTo],
    });
    await client.query({
      name: 'hub_pending_deliver',
      text: 'update subscriptions set last_active_ms = $2, pending_token = $3, pending_ms = $2 where id = $1',
      values: [subscription, now, claim?.token ?? null],
    });
  } else if (filters.some((f) => f.read_seq < readUpTo)) {
    await client.query({
      name: 'hub_take_advance',
      text: 'update state_object_filters set read_seq = $2 where subscription_id = $1 and read_seq < $2',
      values: [subscription, readUpTo],
    });
  }
  return { objects: rows.map(takenOf), judged };
}

/** A change read from the log as a take delivers it: the row itself is the current object (or none, deleted). */
export const takenOf = (r: StateObject & { isDeleted: boolean }): TakenStateObject => ({
  sentinelName: r.sentinelName,
  packageName: r.packageName,
  name: r.name,
  type: r.type,
  current: r.isDeleted ? undefined : r,
});

async function headOf(client: pg.PoolClient): Promise<number> {
  const { rows } = await client.query<{ seq: number }>({
    name: 'hub_state_head',
    text: `select seq from log_heads where log = 'state_objects'`,
  });
  return rows[0].seq;
}
