/**
 * Failed authentications per client address on PostgreSQL (the AuthFailureStore), counted across every
 * hub process: one upsert per failure in `auth_failures` (unlogged: a count lost with a PostgreSQL crash
 * only forgives a minute of guesses), by the database's clock so that processes on machines whose clocks
 * differ count alike. An address that reached the limit is announced on the channel `hub_auth` (its
 * address as the payload), which every process listens on (openedStore.ts: OtherProcesses.onAddressBlocked). Every 100th failure of a
 * process also deletes the rows older than the window.
 */
import type pg from 'pg';
import type { AuthFailureStore } from '../../../hub/ports/authFailures.js';
import { query } from '../connections/transaction.js';
import { AUTH_FAILURE_CHANNEL } from '../feed/channels.js';

const NOW_MS = '(extract(epoch from clock_timestamp()) * 1000)::bigint';
const PRUNE_EVERY = 100;

export class PostgresAuthFailureStore implements AuthFailureStore {
  #recorded = 0;

  constructor(private readonly pool: pg.Pool) {}

  async record(address: string, windowMs: number): Promise<number> {
    const [row] = await query<{ count: number }>(
      this.pool,
      `insert into auth_failures (address, count, last_ms) values ($1, 1, ${NOW_MS})
      on conflict (address) do update set
        count = case when excluded.last_ms - auth_failures.last_ms < $2 then auth_failures.count + 1 else 1 end,
        last_ms = excluded.last_ms
      returning count`,
      [address, windowMs],
    );
    if (++this.#recorded % PRUNE_EVERY === 0)
      await query(this.pool, `delete from auth_failures where last_ms < ${NOW_MS} - $1`, [windowMs]);
    return row.count;
  }

  async announceBlocked(address: string): Promise<void> {
    await query(this.pool, 'select pg_notify($1, $2)', [AUTH_FAILURE_CHANNEL, address]);
  }
}
