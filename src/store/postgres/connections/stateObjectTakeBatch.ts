/**
 * Polls' StateObject takes on PostgreSQL in one round trip per batch (issue 22: one push wakes a
 * thousand polls, and each take of stateObjectTake.ts costs ~8 round trips; takeBatch.ts gathers the
 * takes of one wake-up). For the common case, a claimed take of a subscription with no pending
 * delivery: one repeatable-read transaction sent as one query string, whose one statement reads, for
 * every take of the batch at once (arrays of subscriptions, limits and claim tokens), the filters, the
 * changed objects above each cursor up to the head, moves the cursors and leaves what it delivers
 * pending under the take's claim, as stateObjectTake.ts and pendingDeliveries.ts do. A subscription
 * with a delivery pending there (to be judged) is not for it: the statement changes nothing of it and
 * that take runs as before, as do a take without a claim and one whose client already left. A
 * concurrent change of the rows it writes (a newer poll of one of its subscriptions elsewhere) fails it
 * with a serialization failure (repeatable read): its takes then run again one by one.
 *
 * The statement is prepared once per connection (SQL PREPARE, planned once per session); its values
 * reach it as literals (the subscription ids and tokens escaped by the connection).
 */
import type pg from 'pg';
import type { StateObject, TakenStateObject } from '../../../hub/ports/stateObjects.js';
import { COLUMNS, takenOf } from '../ports/stateObjectTake.js';
import { transactionInOneTrip } from './transaction.js';

const NAME = 'hub_take_state_objects_batch';

/** One take of a batch: its subscription, limit (0: all) and claim token. */
export interface BatchedTake {
  subscription: string;
  limit: number;
  token: string;
}

/** One branch of the read: a filter's unread changes (exact name: by the name's index), as stateObjectTake.ts. */
const unread = (name: string) => `select ${COLUMNS}, o.seq, o.is_deleted as "isDeleted" from state_objects o
    where ${name} and o.seq > f.read_seq and o.seq <= h.top and o.sentinel_name like f.sentinel_like
      and o.package_name like f.package_like and o.type like f.type_like and (not o.is_deleted or o.seq > f.created_seq)`;

/**
 * $1 subscriptions, $2 limits, $3 claim tokens (one per take, distinct subscriptions), $4 now. One row
 * per object delivered, each take's oldest change first (or one row of nulls for a take that delivers
 * none), each saying which take (`take`, from 1) and whether a delivery was pending (nothing done then).
 */
const PREPARE = `prepare ${NAME} (text[], bigint[], text[], bigint) as
with req as (select * from unnest($1::text[], $2::bigint[], $3::text[]) with ordinality as r(sub, lim, token, ord)),
free as (select r.* from req r
  where not exists (select 1 from subscriptions s where s.id = r.sub and s.pending_token is not null)),
head as (select seq as top from log_heads where log = 'state_objects'),
found as (
  select distinct on (q.ord, r.seq) q.ord, q.lim, r.* from free q cross join head h
  join state_object_filters f on f.subscription_id = q.sub and f.read_seq < h.top
  cross join lateral (
    ${unread('f.exact_name is not null and o.name = f.exact_name')}
    union all
    ${unread('f.exact_name is null and o.name like f.name_like')}
  ) r
  order by q.ord, r.seq),
ranked as (select found.*, row_number() over (partition by ord order by seq) as n,
  count(*) over (partition by ord) as total from found),
kept as (select * from ranked where lim <= 0 or n <= lim),
upto as (
  select q.sub, q.token, exists (select 1 from kept k where k.ord = q.ord) as delivering,
    coalesce((select max(k.seq) from kept k where k.ord = q.ord and q.lim > 0 and k.total > q.lim), h.top) as seq
  from free q cross join head h),
moved as (
  update state_object_filters f set redeliver_seq = case when u.delivering then f.read_seq else f.redeliver_seq end,
    read_seq = greatest(f.read_seq, u.seq)
  from upto u
  where f.subscription_id = u.sub and (u.delivering or f.read_seq < u.seq)
  returning f.id),
pended as (
  update subscriptions s set last_active_ms = $4, pending_token = u.token, pending_ms = $4
  from upto u where s.id = u.sub and u.delivering
  returning s.id)
select q.ord as take, q2.ord is null as pending, k.* from req q left join free q2 on q2.ord = q.ord
  left join kept k on k.ord = q.ord order by q.ord, k.seq`;

/** Connections that have the statement prepared (a connection replaced is a new client). */
const prepared = new WeakSet<pg.PoolClient>();

type Row = StateObject & { take: number; pending: boolean; seq: number | null; isDeleted: boolean };

/**
 * The takes in one round trip: for each, what it delivers, or undefined when a delivery is pending (the
 * caller then takes as stateObjectTake.ts does). `once`: a serialization failure is thrown, not retried.
 * A client that leaves while it runs finds what it delivered pending under its claim, put back when
 * its answer is not written (hub/polls/deliveries.ts).
 */
export async function takeBatchInOneTrip(
  pool: pg.Pool,
  takes: BatchedTake[],
  once: boolean,
): Promise<(TakenStateObject[] | undefined)[]> {
  const now = Date.now();
  const results = await transactionInOneTrip(
    pool,
    async (client) => {
      if (!prepared.has(client)) {
        await client.query(PREPARE);
        prepared.add(client);
      }
      const array = (values: string[]) => `array[${values.join(', ')}]`;
      const values = [
        array(takes.map((t) => client.escapeLiteral(t.subscription))),
        array(takes.map((t) => String(t.limit))),
        array(takes.map((t) => client.escapeLiteral(t.token))),
        now,
      ];
      return `begin isolation level repeatable read; execute ${NAME}(${values.join(', ')}); commit`;
    },
    { once },
  );
  const taken: (TakenStateObject[] | undefined)[] = takes.map(() => []);
  for (const row of results[1].rows as Row[]) {
    if (row.pending) taken[row.take - 1] = undefined;
    else if (row.seq !== null) taken[row.take - 1]?.push(takenOf(row));
  }
  return taken;
}
