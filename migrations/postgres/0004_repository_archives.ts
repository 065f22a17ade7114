import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/**
 * The repository's archives in the database (issue 22), so that every hub process on it serves them:
 * each archive once per SHA-256, in 1 MiB chunks numbered from 0. Stored `external` (uncompressed
 * TOAST): a zip is compressed already, and PostgreSQL can then read a chunk without inflating it.
 */
const statements = [
  `create table repository_archives (
     sha256 text collate "C" not null, chunk integer not null, data bytea not null, primary key (sha256, chunk))`,
  `alter table repository_archives alter column data set storage external`,
];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
