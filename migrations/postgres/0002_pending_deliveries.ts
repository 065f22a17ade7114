import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/**
 * A delivery in flight, as SQLite's 0011_pending_deliveries: the answer's token and when it was taken,
 * the cursor before it (messages) or each filter's (StateObjects); null when nothing is pending. Kysely's
 * Migrator runs this in its transaction, under its advisory lock.
 */
const statements = [
  `alter table subscriptions add column pending_token text collate "C", add column pending_ms bigint,
     add column redeliver_from bigint`,
  `alter table state_object_filters add column redeliver_seq bigint`,
];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table subscriptions drop column pending_token, drop column pending_ms, drop column redeliver_from`.execute(
    db,
  );
  await sql`alter table state_object_filters drop column redeliver_seq`.execute(db);
}
