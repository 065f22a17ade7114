import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/**
 * A delivery in flight (hub/polls/deliveries.ts): a poll's take moves its subscription's cursors and records
 * what it delivered as pending until its answer is written: the token of that answer and when it was
 * taken on the subscription, the cursor before it (`redeliver_from`, messages) or each filter's cursor
 * before it (`redeliver_seq`, StateObjects). Null when nothing is pending.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`alter table subscriptions add column pending_token text`.execute(trx);
    await sql`alter table subscriptions add column pending_ms integer`.execute(trx);
    await sql`alter table subscriptions add column redeliver_from integer`.execute(trx);
    await sql`alter table state_object_filters add column redeliver_seq integer`.execute(trx);
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const column of ['pending_token', 'pending_ms', 'redeliver_from']) {
      await sql.raw(`alter table subscriptions drop column ${column}`).execute(trx);
    }
    await sql`alter table state_object_filters drop column redeliver_seq`.execute(trx);
  });
}
