import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/**
 * The configuration document on PostgreSQL (issue 22): one row, the XML text every hub process applies,
 * with a version each change increments (a change commits only on the version it built on) and the text
 * `POST configuration` sent that no reload has applied yet (`pending`). docs/configuration.md.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `create table configuration_document (
         id boolean primary key default true check (id), version bigint not null, text text not null, pending text)`,
    )
    .execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw('drop table if exists configuration_document').execute(db);
}
