import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/**
 * Changes become logs read through cursors (docs/architecture.md): a StateObject carries the sequence
 * number of its last change (a purge leaves a tombstone with `is_deleted = 1`), a StateObject filter a
 * cursor, a message subscription a cursor into the one message log. Nothing pending is lost: the rows of
 * `state_object_changes` and `message_deliveries` that existed before stay as each subscription's
 * backlog and are read before its cursor; nothing new is written to them. Every cursor starts at the
 * end of its log, since what came before is in the backlog.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`alter table state_objects add column seq integer not null default 0`.execute(trx);
    await sql`alter table state_objects add column is_deleted integer not null default 0`.execute(trx);
    await sql`update state_objects set seq = rowid`.execute(trx);
    await sql`create index state_objects_by_seq on state_objects (seq)`.execute(trx);
    await sql`create index state_objects_by_name_seq on state_objects (name, seq)`.execute(trx);

    await sql`alter table state_object_filters add column read_seq integer not null default 0`.execute(trx);
    await sql`alter table state_object_filters add column created_seq integer not null default 0`.execute(trx);
    await sql`update state_object_filters set read_seq = (select coalesce(max(seq), 0) from state_objects),
              created_seq = (select coalesce(max(seq), 0) from state_objects)`.execute(trx);

    await sql`alter table subscriptions add column read_message_id integer not null default 0`.execute(trx);
    await sql`update subscriptions set read_message_id = (select coalesce(max(id), 0) from messages)`.execute(trx);
    await sql`create index subscriptions_by_credential on subscriptions (credential_name)`.execute(trx);

    // A group joined later reaches only messages sent after the join.
    await sql`alter table message_group_members add column joined_after integer not null default 0`.execute(trx);
    await sql`update message_group_members set joined_after = (select coalesce(max(id), 0) from messages)`.execute(trx);
    await sql`create index messages_by_time on messages (sent_ms)`.execute(trx);

    // Saga requests a caller received and has not answered yet: what makes its reply exempt.
    await trx.schema
      .createTable('saga_requests')
      .addColumn('connection_id', 'text', (c) => c.notNull())
      .addColumn('saga_id', 'text', (c) => c.notNull())
      .addColumn('received_ms', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('saga_requests_pk', ['connection_id', 'saga_id'])
      .execute();
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('saga_requests').ifExists().execute();
}
