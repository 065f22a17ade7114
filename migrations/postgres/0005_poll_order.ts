import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/**
 * `poll_order`: the order of polls across hub processes (store/postgres/feed/pollsElsewhere.ts). `cache 1`
 * (the default, spelled out): each `nextval` is taken in call order across sessions, so a poll
 * registered after another anywhere gets the higher number.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create sequence poll_order cache 1`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop sequence poll_order`.execute(db);
}
