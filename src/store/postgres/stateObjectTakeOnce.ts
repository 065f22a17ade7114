/**
 * A poll's take on PostgreSQL in one round trip (issue 22: one push wakes a thousand polls, and each
 * take of stateObjectTake.ts costs ~8). For the common case, a claimed take of a subscription with no
 * pending delivery: one repeatable-read transaction sent as one query string, whose one statement reads
 * the filters, the changed objects above each cursor up to the head, moves the cursors and leaves what
 * it delivers pending under the claim, as stateObjectTake.ts and pendingDeliveries.ts do. A delivery
 * pending there (to be judged), a take without a claim or one whose client already left is not for it:
 * the statement then changes nothing and the take runs as before. A concurrent change of the rows it
 * writes fails it with a serialization failure (repeatable read), run again as any transaction's.
 *
 * The statement is prepared once per connection (SQL PREPARE, planned once per session); its values
 * reach it as literals (the subscription id escaped by the connection).
 */
import type pg from 'pg';
import type { ClientSignal } from '../../hub/clientSignal.js';
import type { StateObject, TakenStateObject } from '../../hub/ports/stateObjects.js';
import type { DeliveryClaim } from '../../hub/ports/subscriptions.js';
import { COLUMNS, takenOf } from './stateObjectTake.js';
import { transactionInOneTrip } from './transaction.js';

const NAME = 'hub_take_state_objects_once';

/** One branch of the read: a filter's unread changes (exact name: by the name's index), as stateObjectTake.ts. */
const unread = (name: string) => `select ${COLUMNS}, o.seq, o.is_deleted as "isDeleted" from state_objects o
    where ${name} and o.seq > f.read_seq and o.seq <= h.top and o.sentinel_name like f.sentinel_like
      and o.package_name like f.package_like and o.type like f.type_like and (not o.is_deleted or o.seq > f.created_seq)`;

/**
 * $1 subscription, $2 limit (0: all), $3 the claim's token, $4 now. One row per object delivered, oldest
 * change first (or one row of nulls), each saying whether a delivery was pending (nothing done then).
 */
const PREPARE = `prepare ${NAME} (text, bigint, text, bigint) as
with sub as (select pending_token from subscriptions where id = $1),
free as (select not exists (select 1 from sub where pending_token is not null) as yes),
head as (select seq as top from log_heads where log = 'state_objects'),
found as (
  select distinct on (r.seq) r.* from state_object_filters f cross join head h cross join free
  cross join lateral (
    ${unread('f.exact_name is not null and o.name = f.exact_name')}
    union all
    ${unread('f.exact_name is null and o.name like f.name_like')}
  ) r
  where f.subscription_id = $1 and f.read_seq < h.top and free.yes
  order by r.seq),
kept as (select * from found order by seq limit (case when $2 > 0 then $2 end)),
upto as (
  select case when $2 > 0 and (select count(*) from found) > $2 then (select max(seq) from kept)
    else (select top from head) end as seq, exists (select 1 from kept) as delivering),
moved as (
  update state_object_filters f set redeliver_seq = case when u.delivering then f.read_seq else f.redeliver_seq end,
    read_seq = greatest(f.read_seq, u.seq)
  from upto u cross join free
  where f.subscription_id = $1 and free.yes and (u.delivering or f.read_seq < u.seq)
  returning f.id),
pended as (
  update subscriptions s set last_active_ms = $4, pending_token = $3, pending_ms = $4
  from upto u where s.id = $1 and u.delivering
  returning s.id)
select not free.yes as pending, k.* from free left join kept k on true order by k.seq`;

/** Connections that have the statement prepared (a connection replaced is a new client). */
const prepared = new WeakSet<pg.PoolClient>();

type Row = StateObject & { pending: boolean; seq: number | null; isDeleted: boolean };

/**
 * The take in one round trip, or undefined when it is not for this take (see the header): the caller
 * then takes as stateObjectTake.ts does. A client that leaves while it runs finds what it delivered
 * pending under its claim, put back when its answer is not written (hub/deliveries.ts).
 */
export async function takeInOneTrip(
  pool: pg.Pool,
  subscription: string,
  limit: number,
  abort: ClientSignal,
  claim: DeliveryClaim | undefined,
): Promise<TakenStateObject[] | undefined> {
  if (!claim || abort.aborted || !Number.isSafeInteger(limit)) return undefined;
  const now = Date.now();
  const results = await transactionInOneTrip(pool, async (client) => {
    if (!prepared.has(client)) {
      await client.query(PREPARE);
      prepared.add(client);
    }
    const values = [client.escapeLiteral(subscription), limit, client.escapeLiteral(claim.token), now];
    return `begin isolation level repeatable read; execute ${NAME}(${values.join(', ')}); commit`;
  });
  const rows = results[1].rows as Row[];
  if (rows[0]?.pending) return undefined;
  return rows.filter((r) => r.seq !== null).map(takenOf);
}
