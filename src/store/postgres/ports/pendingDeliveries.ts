/**
 * Pending deliveries on PostgreSQL (hub/polls/deliveries.ts), as SQLite's pendingDeliveries.ts: the
 * StateObject side of a take's claim (each filter's cursor before the delivery, the token on the
 * subscription), and the settling of a pending delivery: consumed (the token goes; one set-based
 * statement per group commit, as every written answer settles one), or put back (the cursors return
 * to before it; rare: a transaction each). Both only while that token is the pending one.
 */
import type pg from 'pg';
import type { DeliveryClaim, PendingVerdict } from '../../../hub/ports/subscriptions.js';
import { pendingVerdict } from '../../../hub/ports/subscriptions.js';
import { GroupCommit } from '../connections/groupCommit.js';
import type { PostgresLog } from '../connections/pool.js';
import { transaction } from '../connections/transaction.js';

/**
 * Inside a StateObject take: the claim's verdict on the subscription's pending delivery (undefined:
 * none). On `redeliver` the filters' cursors are back before it; any verdict but `wait` ends it.
 */
export async function judgeFilters(
  client: pg.PoolClient,
  subscription: string,
  claim: DeliveryClaim | undefined,
): Promise<PendingVerdict | undefined> {
  const { rows } = await client.query<{ pending_token: string | null; pending_ms: number | null }>({
    name: 'hub_pending_of',
    text: 'select pending_token, pending_ms from subscriptions where id = $1',
    values: [subscription],
  });
  if (!rows[0]) return undefined;
  const verdict = pendingVerdict(claim, rows[0].pending_token, rows[0].pending_ms);
  if (verdict === 'redeliver') await restoreFilters(client, subscription);
  if (verdict === 'delivered' || verdict === 'redeliver') {
    await client.query({
      name: 'hub_pending_clear',
      text: 'update subscriptions set pending_token = null where id = $1',
      values: [subscription],
    });
  }
  return verdict;
}

/** Inside a StateObject take that delivers: every cursor moves to `seq` at least, the move pending under the claim. */
export async function deliverFilters(
  client: pg.PoolClient,
  subscription: string,
  seq: number,
  claim: DeliveryClaim | undefined,
  now: number,
): Promise<void> {
  await client.query({
    name: 'hub_pending_deliver_filters',
    text: 'update state_object_filters set redeliver_seq = read_seq, read_seq = greatest(read_seq, $2) where subscription_id = $1',
    values: [subscription, seq],
  });
  await client.query({
    name: 'hub_pending_deliver',
    text: 'update subscriptions set last_active_ms = $2, pending_token = $3, pending_ms = $2 where id = $1',
    values: [subscription, now, claim?.token ?? null],
  });
}

async function restoreFilters(client: pg.PoolClient, subscription: string): Promise<void> {
  await client.query({
    name: 'hub_pending_restore_filters',
    text: 'update state_object_filters set read_seq = redeliver_seq where subscription_id = $1 and redeliver_seq is not null',
    values: [subscription],
  });
}

interface Settled {
  id: string;
  token: string;
}

/** SubscriptionStore.settle on PostgreSQL. */
export class PostgresPendingDeliveries {
  readonly #pool: pg.Pool;
  readonly #consumed: GroupCommit<Settled, void>;

  /** `writes`: the pool of its group commit (this process's write connections); default `pool`. */
  constructor(pool: pg.Pool, log: PostgresLog, writes: pg.Pool = pool) {
    this.#pool = pool;
    this.#consumed = new GroupCommit<Settled, void>({
      pool: writes,
      log,
      oneStatement: true,
      write: async (client, items) => {
        await client.query({
          name: 'hub_pending_consumed',
          text: `update subscriptions s set pending_token = null from unnest($1::text[], $2::text[]) as a(id, token)
                 where s.id = a.id and s.pending_token = a.token`,
          values: [items.map((i) => i.id), items.map((i) => i.token)],
        });
        return items.map(() => undefined);
      },
    });
  }

  settle(id: string, token: string, written: boolean): Promise<void> {
    if (written) return this.#consumed.submit({ id, token });
    return transaction(this.#pool, async (client) => {
      const back = await client.query({
        name: 'hub_pending_put_back',
        text: `update subscriptions set read_message_id = coalesce(redeliver_from, read_message_id), pending_token = null
               where id = $1 and pending_token = $2`,
        values: [id, token],
      });
      if ((back.rowCount ?? 0) > 0) await restoreFilters(client, id);
    });
  }
}
