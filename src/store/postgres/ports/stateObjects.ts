/**
 * StateObjects as one log on PostgreSQL (the PostgreSQL StateObjectStore): every change (push, purge,
 * expiry) takes the next number of the log from its head row (logs.ts), so numbers are gap-free in
 * commit order and a filter's cursor (`read_seq`) never passes a change not yet committed. Writers of
 * the log take the head first, then rows: pushes in one statement (group commit), purges and expiries
 * by locking the head, then writing. A poll's take reads each filter above its cursor, up to the head
 * of its snapshot (repeatable read), and moves the cursors in the same transaction (the common case:
 * the takes of one wake-up together, in one round trip, stateObjectTakeBatch.ts).
 */
import type pg from 'pg';
import type { ClientSignal } from '../../../hub/polls/clientSignal.js';
import type {
  StateObject,
  StateObjectChange,
  StateObjectStore,
  StateObjectWrite,
  TakenStateObject,
  TakenStateObjects,
} from '../../../hub/ports/stateObjects.js';
import type { DeliveryClaim } from '../../../hub/ports/deliveryClaim.js';
import type { StateObjectPatterns } from '../../../hub/ports/stateObjectPatterns.js';
import { GroupCommit } from '../connections/groupCommit.js';
import { upsertStateObjects } from '../connections/logs.js';
import type { OwnCommits } from '../feed/ownCommits.js';
import type { PostgresLog } from '../connections/pool.js';
import { COLUMNS, takeStateObjects } from './stateObjectTake.js';
import type { BatchedTake } from '../connections/stateObjectTakeBatch.js';
import { takeBatchInOneTrip } from '../connections/stateObjectTakeBatch.js';
import { TakeBatch } from '../connections/takeBatch.js';
import { storeError, transaction } from '../connections/transaction.js';

/** The lowest cursor, counting where a pending delivery may read again from. */
const UNREAD_BY_ALL = `select coalesce(min(case when s.pending_token is null then f.read_seq
  else least(f.read_seq, f.redeliver_seq) end), 9007199254740991)
  from state_object_filters f join subscriptions s on s.id = f.subscription_id`;

/** A wire `*` pattern as a LIKE pattern (`\`, `%`, `_` escaped with `\`, `*` → `%`), as the filters' generated columns. */
export const toLike = (pattern: string) => pattern.replace(/[\\%_]/g, (c) => `\\${c}`).replace(/\*/g, '%');

export interface PostgresStateObjectStoreOptions {
  pool: pg.Pool;
  /** The pool of its group commit (this process's write connections, hubStore.ts); default `pool`. */
  writes?: pg.Pool;
  log: PostgresLog;
  /** Rings the other processes after a commit that changed the log (listener.ts, notifyCommitted). */
  announce?(client: pg.PoolClient): Promise<void>;
  /** Each group commit's COMMIT duration in ms and its items (metrics). */
  committed?(commitMs: number, items: number): void;
  /** Where a push batch records the numbers it committed (this process's tail reader skips them). */
  own?: OwnCommits;
}

const ignore = () => undefined;

export class PostgresStateObjectStore implements StateObjectStore {
  readonly #pool: pg.Pool;
  /** One push batch, one statement; each push's result is its number in the log. */
  readonly #pushes: GroupCommit<StateObjectWrite, number>;
  readonly #announce: (client: pg.PoolClient) => Promise<void>;
  /** The claimed takes of one wake-up, one round trip per batch. */
  readonly #takes: TakeBatch<BatchedTake, TakenStateObject[]>;

  constructor(options: PostgresStateObjectStoreOptions) {
    this.#pool = options.pool;
    const pool = options.pool;
    this.#takes = new TakeBatch({
      run: (takes) => takeBatchInOneTrip(pool, takes, true),
      runAlone: async (take) => (await takeBatchInOneTrip(pool, [take], false))[0],
      subscriptionOf: (take) => take.subscription,
    });
    this.#announce = options.announce ?? (async () => {});
    const own = options.own;
    this.#pushes = new GroupCommit<StateObjectWrite, number>({
      pool: options.writes ?? options.pool,
      log: options.log,
      oneStatement: true,
      // The latest write of each object in the batch wins (one row may be written once per statement).
      write: async (client, writes) => {
        const last = new Map<string, number>();
        const keys = writes.map((w) => `${w.sentinelName}\u0000${w.packageName}\u0000${w.name}`);
        keys.forEach((key, i) => last.set(key, i));
        const kept = writes.filter((_, i) => last.get(keys[i]) === i);
        const rows = kept.map((w) => ({
          sentinel_name: w.sentinelName,
          package_name: w.packageName,
          name: w.name,
          type: w.type,
          value: w.value,
          metadatas: w.metadatas,
          last_update_ms: w.lastUpdateMs,
          lifetime_s: w.lifetimeS,
          expires_at_ms: w.expiresAtMs,
        }));
        const seqs = await upsertStateObjects(client, rows);
        // Rows keep the writes' order: the n-th kept write has the n-th number; a write superseded in its
        // batch gets the number of the one that won.
        let n = 0;
        const seqOf = new Map<string, number>();
        keys.forEach((key, i) => {
          if (last.get(key) === i) seqOf.set(key, seqs[n++]);
        });
        return keys.map((key) => seqOf.get(key) ?? 0);
      },
      onCommit: own && ((_, seqs) => own.committed('state_objects', Math.min(...seqs), Math.max(...seqs))),
      afterCommit: (client) => this.#announce(client),
      committed: options.committed,
    });
  }

  push(write: StateObjectWrite): Promise<void> {
    return this.#pushes.submit(write).then(ignore);
  }

  async purge(
    producer: { sentinelName: string; packageName: string },
    patterns: { name: string; type: string },
  ): Promise<StateObjectChange[]> {
    const purged = await transaction(this.#pool, async (client) => {
      const head = await lockHead(client);
      const { rows } = await client.query<{ name: string; type: string }>({
        name: 'hub_purge_keys',
        text: `select name, type from state_objects where sentinel_name = $1 and package_name = $2 and not is_deleted
               and name like $3 and type like $4 order by name`,
        values: [producer.sentinelName, producer.packageName, toLike(patterns.name), toLike(patterns.type)],
      });
      if (rows.length === 0) return rows;
      // The tombstone keeps key, type and time; the value goes.
      await client.query({
        name: 'hub_purge_tombstones',
        text: `update state_objects s set is_deleted = true, seq = $3 + k.ord, value = 'null', metadatas = '{}',
                 last_update_ms = $4, lifetime_s = 0, expires_at_ms = null
               from unnest($5::text[]) with ordinality as k(name, ord)
               where s.sentinel_name = $1 and s.package_name = $2 and s.name = k.name`,
        values: [producer.sentinelName, producer.packageName, head, Date.now(), rows.map((r) => r.name)],
      });
      await moveHead(client, head + rows.length);
      return rows;
    });
    if (purged.length > 0) await this.#ring();
    return purged.map((k) => ({
      sentinelName: producer.sentinelName,
      packageName: producer.packageName,
      name: k.name,
      type: k.type,
    }));
  }

  /** Under the head's lock, so that several processes announce each expiry once. */
  async expire(now: number): Promise<StateObjectChange[]> {
    const expired = await transaction(this.#pool, async (client) => {
      const head = await lockHead(client);
      const { rows } = await client.query<{ sentinel_name: string; package_name: string; name: string; type: string }>({
        name: 'hub_expired',
        text: `select sentinel_name, package_name, name, type from state_objects
               where expires_at_ms is not null and expires_at_ms <= $1 and not expiry_announced
               order by expires_at_ms, sentinel_name, package_name, name`,
        values: [now],
      });
      if (rows.length === 0) return rows;
      await client.query({
        name: 'hub_mark_expired',
        text: `update state_objects s set expiry_announced = true, seq = $1 + k.ord
               from unnest($2::text[], $3::text[], $4::text[]) with ordinality as k(s, p, n, ord)
               where s.sentinel_name = k.s and s.package_name = k.p and s.name = k.n`,
        values: [head, rows.map((r) => r.sentinel_name), rows.map((r) => r.package_name), rows.map((r) => r.name)],
      });
      await moveHead(client, head + rows.length);
      return rows;
    });
    if (expired.length > 0) await this.#ring();
    return expired.map((r) => ({
      sentinelName: r.sentinel_name,
      packageName: r.package_name,
      name: r.name,
      type: r.type,
    }));
  }

  /**
   * Reads what the subscription has not seen, up to the head of this transaction's snapshot (the oldest
   * `limit` changed objects, 0 = all, each with its latest value), and moves its cursors past them.
   * Rejects with ClientGone, rolling back, when `abort` fired meanwhile.
   */
  async take(
    subscription: string,
    limit: number,
    abort: ClientSignal,
    claim?: DeliveryClaim,
  ): Promise<TakenStateObjects> {
    // The common case, no delivery pending, with the wake-up's other takes (stateObjectTakeBatch.ts);
    // the rest the single way (stateObjectTake.ts).
    if (claim && !abort.aborted && Number.isSafeInteger(limit)) {
      const batched = await this.#takes.submit({ subscription, limit, token: claim.token });
      if (batched) return { objects: batched };
    }
    return transaction(this.#pool, (client) => takeStateObjects(client, subscription, limit, abort, claim), {
      isolation: 'repeatable read',
    });
  }

  async current(patterns: StateObjectPatterns): Promise<StateObject[]> {
    try {
      const { rows } = await this.#pool.query<StateObject>({
        name: 'hub_current',
        text: `select ${COLUMNS} from state_objects where not is_deleted and sentinel_name like $1 and package_name like $2
               and name like $3 and type like $4 order by sentinel_name, package_name, name`,
        values: [toLike(patterns.sentinel), toLike(patterns.package), toLike(patterns.name), toLike(patterns.type)],
      });
      return rows;
    } catch (error) {
      throw storeError(error);
    }
  }

  async nextExpiry(): Promise<number | undefined> {
    try {
      const { rows } = await this.#pool.query<{ next: number | null }>(
        'select min(expires_at_ms) as next from state_objects where expires_at_ms is not null and not expiry_announced',
      );
      return rows[0]?.next ?? undefined;
    } catch (error) {
      throw storeError(error);
    }
  }

  /** Removes tombstones every cursor has passed, and those older than `cutoffMs` whoever has not read them. */
  async sweep(cutoffMs: number): Promise<number> {
    try {
      const result = await this.#pool.query(
        `delete from state_objects where is_deleted and (seq <= (${UNREAD_BY_ALL})
         or last_update_ms < $1)`,
        [cutoffMs],
      );
      return result.rowCount ?? 0;
    } catch (error) {
      throw storeError(error);
    }
  }

  async #ring(): Promise<void> {
    const client = await this.#pool.connect().catch(() => undefined);
    if (!client) return;
    try {
      await this.#announce(client);
    } catch {
      // A hint: the other processes' fallback read covers a lost one.
    } finally {
      client.release();
    }
  }
}

export async function countStateObjects(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>('select count(*) as n from state_objects where not is_deleted');
  return rows[0].n;
}

/** The StateObject log's head, locked until COMMIT: this transaction is the log's one writer now. */
async function lockHead(client: pg.PoolClient): Promise<number> {
  const { rows } = await client.query<{ seq: number }>({
    name: 'hub_lock_state_head',
    text: `select seq from log_heads where log = 'state_objects' for update`,
  });
  return rows[0].seq;
}

async function moveHead(client: pg.PoolClient, seq: number): Promise<void> {
  await client.query({
    name: 'hub_move_state_head',
    text: `update log_heads set seq = $1 where log = 'state_objects'`,
    values: [seq],
  });
}
