import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/**
 * The hub processes sharing the database (store/postgres/ports/processes.ts): each one's row, rewritten by
 * its heartbeat every few seconds. Times are epoch milliseconds; `heartbeat_ms` is PostgreSQL's clock.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table hub_processes (
    id text collate "C" primary key, host text not null, pid integer not null, version text not null,
    started_ms bigint not null, heartbeat_ms bigint not null, waiting_polls integer not null)`.execute(db);
}
