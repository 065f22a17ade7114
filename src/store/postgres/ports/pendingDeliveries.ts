/**
 * Pending deliveries on PostgreSQL (hub/polls/deliveries.ts), as SQLite's pendingDeliveries.ts: the
 * settling of a pending delivery a take left (stateObjectTake.ts, messageTake.ts): consumed (the token
 * goes; one set-based statement per group commit, as every written answer settles one), or put back
 * (the cursors return to before it; rare: a transaction each). Both only while that token is the
 * pending one.
 */
import type pg from 'pg';
import { GroupCommit } from '../connections/groupCommit.js';
import type { PostgresLog } from '../connections/pool.js';
import { transaction } from '../connections/transaction.js';

/** The filters' cursors back to before the pending delivery (a take's `redeliver`, a put back). */
export async function restoreFilters(client: pg.PoolClient, subscription: string): Promise<void> {
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
