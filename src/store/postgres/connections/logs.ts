/**
 * Gap-free numbering of the logs on PostgreSQL (issue 22, "Cursors that never skip").
 *
 * A sequence hands out numbers before commit: a writer that got 1 and commits after another that got 2
 * lets a `> cursor` reader pass 2, then never see 1. Here each log has one row in `log_heads`, and a
 * write takes its numbers by updating that row **in the same statement** that writes its rows: the row
 * lock is held until COMMIT, so the writers of one log commit in number order, a rolled-back write gives
 * its numbers back, and a reader that sees number n has seen every number below it. Cursors stay single
 * integers and "missed" (a first id above cursor + 1) stays exact, as on SQLite.
 *
 * The price is that writers of one log take turns for one statement plus its COMMIT (measured in
 * docs/operations.md); the logs are independent of each other. Rules that keep it deadlock-free: take
 * a head only in the statement that writes the log's rows, never lock a subscription while holding a
 * head (takes run in their own transactions), and retry a whole batch on 40P01/40001.
 *
 * Every function here is one statement on the connection it is given (the caller owns the
 * transaction) and uses a named prepared statement.
 */
import type pg from 'pg';
import type { MessagesTable, PackageLogsTable, StateObjectsTable } from './schema.js';

export type LogName = 'state_objects' | 'messages' | 'package_logs';

export const LOG_NAMES: readonly LogName[] = ['state_objects', 'messages', 'package_logs'];

/** A connection, a pool or a transaction's client: anything that runs a query. */
export interface Queryable {
  query<R extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>>;
}

/** A message row before the log numbers it. */
export type NewMessage = Omit<MessagesTable, 'id'>;

/** A StateObject row before the log numbers it (the flags keep their column defaults). */
export type NewStateObject = Omit<StateObjectsTable, 'seq' | 'expiry_announced' | 'is_deleted'>;

/** A WriteLog entry before the log numbers it. */
export type NewPackageLog = Omit<PackageLogsTable, 'id'>;

const column = <T, K extends keyof T>(rows: readonly T[], key: K) => rows.map((r) => r[key]);

const APPEND_MESSAGES = `
  with h as (update log_heads set seq = seq + $1 where log = 'messages' returning seq)
  insert into messages (id, sender_connection_id, sender_type, sender_friendly_name, scope, args, saga_id, key, data, sent_ms)
  select h.seq - $1 + k.ord, k.c, k.t, k.f, k.s, k.a, k.g, k.k, k.d, k.ms
  from h, unnest($2::text[], $3::int[], $4::text[], $5::int[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bigint[])
       with ordinality as k(c, t, f, s, a, g, k, d, ms, ord)
  returning id`;

/** Appends messages in the given order; returns their ids (consecutive, ascending). */
export async function appendMessages(client: Queryable, rows: readonly NewMessage[]): Promise<number[]> {
  if (rows.length === 0) return [];
  const result = await client.query<{ id: number }>({
    name: 'hub_append_messages',
    text: APPEND_MESSAGES,
    values: [
      rows.length,
      column(rows, 'sender_connection_id'),
      column(rows, 'sender_type'),
      column(rows, 'sender_friendly_name'),
      column(rows, 'scope'),
      column(rows, 'args'),
      column(rows, 'saga_id'),
      column(rows, 'key'),
      column(rows, 'data'),
      column(rows, 'sent_ms'),
    ],
  });
  return result.rows.map((r) => r.id).sort((a, b) => a - b);
}

const UPSERT_STATE_OBJECTS = `
  with h as (update log_heads set seq = seq + $1 where log = 'state_objects' returning seq),
  w as (
    insert into state_objects (sentinel_name, package_name, name, type, value, metadatas, last_update_ms, lifetime_s,
                               expires_at_ms, expiry_announced, seq, is_deleted)
    select k.s, k.p, k.n, k.t, k.v, k.m, k.ms, k.l, k.e, false, h.seq - $1 + k.ord, false
    from h, unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::bigint[], $10::bigint[])
         with ordinality as k(s, p, n, t, v, m, ms, l, e, ord)
    on conflict (sentinel_name, package_name, name) do update set
      type = excluded.type, value = excluded.value, metadatas = excluded.metadatas, last_update_ms = excluded.last_update_ms,
      lifetime_s = excluded.lifetime_s, expires_at_ms = excluded.expires_at_ms, expiry_announced = false,
      seq = excluded.seq, is_deleted = false)
  select seq - $1 + 1 as first from h`;

/**
 * Pushes StateObjects (insert or replace), each taking the next number of the StateObject log in the
 * given order; returns their numbers in that order. Each object (sentinel, package, name) may appear
 * once: the caller keeps the latest value of a batch.
 */
export async function upsertStateObjects(client: Queryable, rows: readonly NewStateObject[]): Promise<number[]> {
  if (rows.length === 0) return [];
  // One row back (the first number), not one per object: the rows took the numbers that follow it in order.
  const result = await client.query<{ first: number }>({
    name: 'hub_upsert_state_objects',
    text: UPSERT_STATE_OBJECTS,
    values: [
      rows.length,
      column(rows, 'sentinel_name'),
      column(rows, 'package_name'),
      column(rows, 'name'),
      column(rows, 'type'),
      column(rows, 'value'),
      column(rows, 'metadatas'),
      column(rows, 'last_update_ms'),
      column(rows, 'lifetime_s'),
      column(rows, 'expires_at_ms'),
    ],
  });
  const first = result.rows[0].first;
  return rows.map((_, i) => first + i);
}

const APPEND_PACKAGE_LOGS = `
  with h as (update log_heads set seq = seq + $1 where log = 'package_logs' returning seq)
  insert into package_logs (id, sentinel_name, package_name, level, message, logged_ms)
  select h.seq - $1 + k.ord, k.s, k.p, k.l, k.m, k.ms
  from h, unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[]) with ordinality as k(s, p, l, m, ms, ord)
  returning id`;

/** Appends package log entries in the given order; returns their ids (consecutive, ascending). */
export async function appendPackageLogs(client: Queryable, rows: readonly NewPackageLog[]): Promise<number[]> {
  if (rows.length === 0) return [];
  const result = await client.query<{ id: number }>({
    name: 'hub_append_package_logs',
    text: APPEND_PACKAGE_LOGS,
    values: [
      rows.length,
      column(rows, 'sentinel_name'),
      column(rows, 'package_name'),
      column(rows, 'level'),
      column(rows, 'message'),
      column(rows, 'logged_ms'),
    ],
  });
  return result.rows.map((r) => r.id).sort((a, b) => a - b);
}

/**
 * The last number committed in each log, as this statement's snapshot sees it: every row numbered up
 * to it is visible to a read in the same snapshot (the head commits with its rows).
 */
export async function logHeads(client: Queryable): Promise<Record<LogName, number>> {
  const result = await client.query<{ log: LogName; seq: number }>({
    name: 'hub_log_heads',
    text: 'select log, seq from log_heads',
  });
  const heads = { state_objects: 0, messages: 0, package_logs: 0 };
  for (const row of result.rows) heads[row.log] = row.seq;
  return heads;
}
