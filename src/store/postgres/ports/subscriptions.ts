/**
 * Subscriptions on PostgreSQL (the PostgreSQL SubscriptionStore). Each operation is one transaction.
 * Rules that SQLite's single writer made safe are explicit here: the per-credential cap is checked on
 * the credential's count row, which the insert's trigger locks (two processes cannot both pass it), a
 * filter or a group is added once through unique keys (`on conflict do nothing`), the downtime
 * discount runs under a lock so that two processes starting at once discount once, and one process
 * sweeps at a time (a transaction-scoped advisory lock, tried, never waited for) and at most once per
 * half interval (`swept_ms`). Each process keeps the subscriptions of its long-waiting polls active
 * (`keepActive`), so the one that sweeps leaves them.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { hubError } from '../../../errors.js';
import type { StateObjectPatterns } from '../../../hub/ports/stateObjectPatterns.js';
import type {
  ExpiredSubscription,
  OpenedSubscription,
  SubscriptionInterest,
  SubscriptionKind,
  SubscriptionOwner,
  SubscriptionStore,
} from '../../../hub/ports/subscriptions.js';
import { hasWildcard } from '../../../wildcard.js';
import { messageHead } from './messageSubscriptions.js';
import { findOwned } from './ownedInterest.js';
import type { PostgresPendingDeliveries } from './pendingDeliveries.js';
import { NOW_MS } from './processes.js';
import { storeError, transaction } from '../connections/transaction.js';

const HEARTBEAT_KEY = 'heartbeat_ms';
/** A registry heartbeat younger than this is a process still running (3 of its 5 s heartbeats). */
const LIVE_PROCESS_MS = 15_000;
/** When a process last swept (the sweeper of another process skips its turn until half an interval later). */
const SWEPT_KEY = 'swept_ms';

type SubscriptionRow = { id: string; kind: SubscriptionKind; owner_connection_id: string; credential_name: string };

export class PostgresSubscriptionStore implements SubscriptionStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly maxPerCredential: number,
    private readonly pending: PostgresPendingDeliveries,
  ) {}

  openStateObjects(
    owner: SubscriptionOwner,
    requestedId: string | undefined,
    filter: StateObjectPatterns,
  ): Promise<OpenedSubscription> {
    return transaction(this.pool, async (client) => {
      const id = await this.#choose(client, owner, 'state_objects', requestedId);
      const head = (
        await client.query<{ seq: number }>({
          name: 'hub_state_head',
          text: `select seq from log_heads where log = 'state_objects'`,
        })
      ).rows[0].seq;
      const added = await client.query({
        name: 'hub_add_filter',
        text: `insert into state_object_filters (subscription_id, sentinel_pattern, package_pattern, name_pattern, type_pattern, exact_name, read_seq, created_seq)
               values ($1, $2, $3, $4, $5, $6, 0, $7)
               on conflict (subscription_id, sentinel_pattern, package_pattern, name_pattern, type_pattern) do nothing`,
        values: [
          id,
          filter.sentinel,
          filter.package,
          filter.name,
          filter.type,
          hasWildcard(filter.name) ? null : filter.name,
          head,
        ],
      });
      return { id, added: (added.rowCount ?? 0) > 0 };
    });
  }

  openMessages(owner: SubscriptionOwner, requestedId: string | undefined, group?: string): Promise<OpenedSubscription> {
    return transaction(this.pool, async (client) => {
      const id = await this.#choose(client, owner, 'messages', requestedId);
      if (group !== undefined) {
        await client.query({
          name: 'hub_join_group',
          text: `insert into message_group_members (subscription_id, group_name, joined_after)
                 values ($1, $2, (select seq from log_heads where log = 'messages')) on conflict do nothing`,
          values: [id, group],
        });
      }
      return { id, added: false };
    });
  }

  /** One round trip (every poll starts with it): ownedInterest.ts. */
  findOwned(owner: SubscriptionOwner, id: string, kind: SubscriptionKind): Promise<SubscriptionInterest | undefined> {
    return findOwned(this.pool, owner, id, kind);
  }

  async touched(id: string): Promise<void> {
    try {
      await this.pool.query({
        name: 'hub_touch',
        text: 'update subscriptions set last_active_ms = $1 where id = $2',
        values: [Date.now(), id],
      });
    } catch (error) {
      throw storeError(error);
    }
  }

  async removeOwned(owner: SubscriptionOwner, ids: string[], usedSince = Number.MAX_SAFE_INTEGER): Promise<number> {
    try {
      const { rowCount } = await this.pool.query({
        name: 'hub_remove_owned',
        text: `delete from subscriptions where id = any($1::text[]) and owner_connection_id = $2 and credential_name = $3
               and last_active_ms < $4`,
        values: [ids, owner.connectionId, owner.credentialName, usedSince],
      });
      return rowCount ?? 0;
    } catch (error) {
      throw storeError(error);
    }
  }

  settle(id: string, token: string, written: boolean): Promise<void> {
    return this.pending.settle(id, token, written);
  }

  /**
   * Under a lock on the heartbeat row: two processes starting at once discount the downtime once. A
   * process that starts while another runs (its registry row's heartbeat younger than
   * LIVE_PROCESS_MS) discounts nothing: the hub was not down, and an update of every subscription
   * beside other processes' takes deadlocked with them (a restarted process exited on it in the chaos
   * run, 26 November).
   */
  discountDowntime(now: number): Promise<void> {
    return transaction(this.pool, async (client) => {
      await client.query({
        name: 'hub_heartbeat_row',
        text: `insert into hub_settings (key, value) values ($1, $2) on conflict do nothing`,
        values: [HEARTBEAT_KEY, String(now)],
      });
      const { rows } = await client.query<{ value: string; running: boolean }>({
        name: 'hub_heartbeat_lock',
        text: `select value, exists (select 1 from hub_processes where heartbeat_ms > ${NOW_MS} - $2) as running
               from hub_settings where key = $1 for update`,
        values: [HEARTBEAT_KEY, LIVE_PROCESS_MS],
      });
      const last = Number(rows[0].value);
      if (now > last && !rows[0].running)
        await client.query({
          name: 'hub_discount',
          text: 'update subscriptions set last_active_ms = last_active_ms + $1',
          values: [now - last],
        });
      await writeHeartbeat(client, now);
    });
  }

  sweep(now: number, idleCutoff: number, keep: string[], everyMs: number): Promise<ExpiredSubscription[] | undefined> {
    return transaction(this.pool, async (client) => {
      const { rows: lock } = await client.query<{ locked: boolean }>({
        name: 'hub_sweep_lock',
        text: `select pg_try_advisory_xact_lock(hashtext('hub.sweep')) as locked`,
      });
      if (!lock[0].locked) return undefined;
      // Read after the lock, in a snapshot of its own: a sweep committed just before it counts.
      const { rows: swept } = await client.query<{ value: string }>({
        name: 'hub_swept_at',
        text: 'select value from hub_settings where key = $1',
        values: [SWEPT_KEY],
      });
      if (swept.length > 0 && now - Number(swept[0].value) < everyMs / 2) return undefined;
      await writeHeartbeat(client, now, SWEPT_KEY);
      await writeHeartbeat(client, now);
      const { rows } = await client.query<{
        id: string;
        kind: string;
        credential_name: string;
        friendly_name: string | null;
      }>({
        name: 'hub_sweep_subscriptions',
        text: `delete from subscriptions s where last_active_ms < $1 and not (id = any($2::text[]))
               returning id, kind, credential_name, (select friendly_name from callers c where c.connection_id = s.owner_connection_id) as friendly_name`,
        values: [idleCutoff, keep],
      });
      return rows.map((r) => ({
        id: r.id,
        kind: r.kind,
        credentialName: r.credential_name,
        friendlyName: r.friendly_name ?? '',
      }));
    });
  }

  async keepActive(ids: string[], now: number): Promise<void> {
    try {
      await this.pool.query({
        name: 'hub_keep_active',
        text: 'update subscriptions set last_active_ms = $1 where id = any($2::text[]) and last_active_ms < $1',
        values: [now, ids],
      });
    } catch (error) {
      throw storeError(error);
    }
  }

  async heartbeat(now: number): Promise<void> {
    try {
      await writeHeartbeat(this.pool, now);
    } catch (error) {
      throw storeError(error);
    }
  }

  /** The owner's own subscription when `requestedId` is one; the same id re-created when unknown; a new id otherwise. */
  async #choose(
    client: pg.PoolClient,
    owner: SubscriptionOwner,
    kind: SubscriptionKind,
    requestedId: string | undefined,
  ): Promise<string> {
    if (requestedId) {
      const row = await selectSubscription(client, requestedId);
      if (row && owns(row, owner, kind)) {
        await touch(client, row.id);
        return row.id;
      }
      if (!row && (await this.#insert(client, requestedId, kind, owner))) return requestedId;
    }
    const id = randomUUID();
    await this.#insert(client, id, kind, owner);
    return id;
  }

  /**
   * Inserts unless the id was taken meanwhile (false). The insert's trigger counts it in its credential's
   * row (migration 0008), which stays locked until this transaction ends: another process's subscribe
   * of the same credential waits there and then counts on top, so the cap holds across processes.
   */
  async #insert(client: pg.PoolClient, id: string, kind: SubscriptionKind, owner: SubscriptionOwner): Promise<boolean> {
    const now = Date.now();
    const cursor = kind === 'messages' ? await messageHead(client) : 0;
    const inserted = await client.query({
      name: 'hub_insert_subscription',
      text: `insert into subscriptions (id, kind, owner_connection_id, credential_name, created_ms, last_active_ms, read_message_id)
             values ($1, $2, $3, $4, $5, $5, $6) on conflict (id) do nothing`,
      values: [id, kind, owner.connectionId, owner.credentialName, now, cursor],
    });
    if ((inserted.rowCount ?? 0) === 0) return false;
    const { rows } = await client.query<{ n: number }>({
      name: 'hub_count_owned',
      text: 'select n from credential_subscriptions where credential_name = $1',
      values: [owner.credentialName],
    });
    const owned = rows[0].n - 1;
    if (owned >= this.maxPerCredential) {
      throw hubError('TooManySubscriptions', { credential: owner.credentialName, count: owned });
    }
    return true;
  }
}

const owns = (row: SubscriptionRow, owner: SubscriptionOwner, kind: SubscriptionKind) =>
  row.kind === kind && row.owner_connection_id === owner.connectionId && row.credential_name === owner.credentialName;

async function selectSubscription(client: pg.PoolClient, id: string): Promise<SubscriptionRow | undefined> {
  const { rows } = await client.query<SubscriptionRow>({
    name: 'hub_select_subscription',
    text: 'select id, kind, owner_connection_id, credential_name from subscriptions where id = $1',
    values: [id],
  });
  return rows[0];
}

async function touch(client: pg.PoolClient, id: string): Promise<void> {
  await client.query({
    name: 'hub_touch',
    text: 'update subscriptions set last_active_ms = $1 where id = $2',
    values: [Date.now(), id],
  });
}

/** The heartbeat (or another moment: `key`). */
async function writeHeartbeat(client: pg.PoolClient | pg.Pool, now: number, key = HEARTBEAT_KEY): Promise<void> {
  await client.query({
    name: 'hub_write_heartbeat',
    text: 'insert into hub_settings (key, value) values ($1, $2) on conflict (key) do update set value = excluded.value',
    values: [key, String(now)],
  });
}

export async function countSubscriptions(pool: pg.Pool): Promise<{ kind: string; n: number }[]> {
  const { rows } = await pool.query<{ kind: string; n: number }>(
    'select kind, count(*) as n from subscriptions group by kind',
  );
  return rows;
}
