/**
 * The process registry on PostgreSQL (the PostgreSQL ProcessRegistryStore): one `hub_processes` row
 * per running process, its heartbeat stamped and its age measured by PostgreSQL's clock.
 */
import type pg from 'pg';
import type { HubProcessReport, HubProcessRow, ProcessRegistryStore } from '../../../hub/ports/processes.js';
import type { HubProcessesTable } from '../connections/schema.js';
import { query } from '../connections/transaction.js';

/** PostgreSQL's clock in epoch ms (the registry's heartbeats are stamped with it). */
export const NOW_MS = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

export class PostgresProcessRegistryStore implements ProcessRegistryStore {
  constructor(private readonly pool: pg.Pool) {}

  async heartbeat(r: HubProcessReport): Promise<void> {
    await query(
      this.pool,
      `insert into hub_processes
         (id, host, pid, version, started_ms, heartbeat_ms, waiting_polls, addresses, requests, auth_failures)
       values ($1, $2, $3, $4, $5, ${NOW_MS}, $6, $7, $8, $9)
       on conflict (id) do update set heartbeat_ms = excluded.heartbeat_ms, waiting_polls = excluded.waiting_polls,
         addresses = excluded.addresses, requests = excluded.requests, auth_failures = excluded.auth_failures`,
      [r.id, r.host, r.pid, r.version, r.startedMs, r.waitingPolls, r.addresses, r.requests, r.authFailures],
    );
  }

  async list(silentMs: number): Promise<HubProcessRow[]> {
    const rows = await query<HubProcessesTable & { age_ms: number }>(
      this.pool,
      `select id, host, pid, version, started_ms, heartbeat_ms, ${NOW_MS} - heartbeat_ms as age_ms, waiting_polls,
         addresses, requests, auth_failures
       from hub_processes where heartbeat_ms >= ${NOW_MS} - $1 order by started_ms, id`,
      [silentMs],
    );
    return rows.map((r) => ({
      id: r.id,
      host: r.host,
      pid: r.pid,
      version: r.version,
      startedMs: r.started_ms,
      heartbeatMs: r.heartbeat_ms,
      heartbeatAgeMs: Math.max(0, r.age_ms),
      waitingPolls: r.waiting_polls,
      addresses: r.addresses,
      requests: r.requests,
      authFailures: r.auth_failures,
    }));
  }

  async remove(id: string | undefined, silentMs: number): Promise<void> {
    await query(this.pool, `delete from hub_processes where id = $1 or heartbeat_ms < ${NOW_MS} - $2`, [
      id ?? '',
      silentMs,
    ]);
  }
}

/** `select 1`, failing after `timeoutMs` when PostgreSQL does not answer (the statement goes on alone). */
export async function ping(pool: pg.Pool, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      pool.query('select 1'),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
