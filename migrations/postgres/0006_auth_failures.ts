import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/**
 * Failed authentications per client address, counted across every hub process on the database (issue
 * 22, store/postgres/ports/authFailures.ts). Unlogged: the counts are a minute's worth of throttling, not
 * data; a PostgreSQL crash empties the table, which only forgives the guesses of that minute.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `create unlogged table auth_failures (
         address text collate "C" primary key, count integer not null, last_ms bigint not null)`,
    )
    .execute(db);
}
