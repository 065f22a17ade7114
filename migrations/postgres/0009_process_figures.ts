import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/**
 * A process's row also says where it serves and its own counts (store/postgres/ports/processes.ts), so that
 * any process serving the console's Server page shows every process's figures in its own row
 * (issue 30). Rows of processes still running an older version read as no address and zero counts.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table hub_processes
    add column addresses text[] not null default '{}',
    add column requests bigint not null default 0,
    add column auth_failures bigint not null default 0`.execute(db);
}
