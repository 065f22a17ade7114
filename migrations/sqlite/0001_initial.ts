import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/**
 * The whole first schema. Times are epoch milliseconds, booleans 0/1, JSON values as text, so that
 * `sqlite3 data/hub.db` shows what the hub stores (docs/schema.md).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // ---- configuration (applied from the XML file) ----
    await trx.schema
      .createTable('hub_settings')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .execute();

    await trx.schema
      .createTable('credentials')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('access_key', 'text', (c) => c.notNull().unique())
      .addColumn('enabled', 'integer', (c) => c.notNull())
      .addColumn('enable_control_hub', 'integer', (c) => c.notNull())
      .addColumn('enable_management_api', 'integer', (c) => c.notNull())
      .addColumn('enable_developer_access', 'integer', (c) => c.notNull())
      .addColumn('authorizations', 'text', (c) => c.notNull())
      .execute();

    await trx.schema
      .createTable('sentinels')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('credential_name', 'text', (c) => c.notNull().references('credentials.name'))
      .execute();

    await trx.schema
      .createTable('package_instances')
      .addColumn('sentinel_name', 'text', (c) => c.notNull().references('sentinels.name').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('package_file', 'text')
      .addColumn('enabled', 'integer', (c) => c.notNull())
      .addColumn('credential_name', 'text', (c) => c.references('credentials.name'))
      .addColumn('auto_start', 'integer', (c) => c.notNull())
      .addColumn('recovery_options', 'text')
      .addPrimaryKeyConstraint('package_instances_pk', ['sentinel_name', 'name'])
      .execute();

    await trx.schema
      .createTable('package_instance_groups')
      .addColumn('sentinel_name', 'text', (c) => c.notNull())
      .addColumn('instance_name', 'text', (c) => c.notNull())
      .addColumn('group_name', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('package_instance_groups_pk', ['sentinel_name', 'instance_name', 'group_name'])
      .addForeignKeyConstraint(
        'package_instance_groups_instance_fk',
        ['sentinel_name', 'instance_name'],
        'package_instances',
        ['sentinel_name', 'name'],
        (c) => c.onDelete('cascade'),
      )
      .execute();
    await trx.schema
      .createIndex('package_instance_groups_by_group')
      .on('package_instance_groups')
      .columns(['group_name'])
      .execute();

    await trx.schema
      .createTable('settings_groups')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .execute();

    // One table for the settings of instances and of settings groups: owner_kind says which.
    await trx.schema
      .createTable('settings')
      .addColumn('owner_kind', 'text', (c) => c.notNull().check(sql`owner_kind in ('instance', 'group')`))
      .addColumn('sentinel_name', 'text', (c) => c.notNull())
      .addColumn('owner_name', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('value', 'content')`))
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('position', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('settings_pk', ['owner_kind', 'sentinel_name', 'owner_name', 'key'])
      .execute();

    await trx.schema
      .createTable('package_instance_imports')
      .addColumn('sentinel_name', 'text', (c) => c.notNull())
      .addColumn('instance_name', 'text', (c) => c.notNull())
      .addColumn('position', 'integer', (c) => c.notNull())
      .addColumn('settings_group_name', 'text', (c) => c.notNull().references('settings_groups.name'))
      .addPrimaryKeyConstraint('package_instance_imports_pk', ['sentinel_name', 'instance_name', 'position'])
      .addForeignKeyConstraint(
        'package_instance_imports_instance_fk',
        ['sentinel_name', 'instance_name'],
        'package_instances',
        ['sentinel_name', 'name'],
        (c) => c.onDelete('cascade'),
      )
      .execute();

    // ---- runtime data ----
    await trx.schema
      .createTable('callers')
      .addColumn('connection_id', 'text', (c) => c.primaryKey())
      .addColumn('friendly_name', 'text', (c) => c.notNull().unique())
      .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('consumer', 'package')`))
      .addColumn('sentinel_name', 'text', (c) => c.notNull())
      .addColumn('package_name', 'text', (c) => c.notNull())
      .addColumn('first_seen_ms', 'integer', (c) => c.notNull())
      .execute();
    await trx.schema.createIndex('callers_by_package').on('callers').columns(['package_name']).execute();
    await trx.schema.createIndex('callers_by_sentinel').on('callers').columns(['sentinel_name']).execute();

    await trx.schema
      .createTable('state_objects')
      .addColumn('sentinel_name', 'text', (c) => c.notNull())
      .addColumn('package_name', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('metadatas', 'text', (c) => c.notNull())
      .addColumn('last_update_ms', 'integer', (c) => c.notNull())
      .addColumn('lifetime_s', 'integer', (c) => c.notNull())
      .addColumn('expires_at_ms', 'integer')
      .addColumn('expiry_announced', 'integer', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('state_objects_pk', ['sentinel_name', 'package_name', 'name'])
      .execute();
    await sql`create index state_objects_pending_expiry on state_objects (expires_at_ms)
              where expires_at_ms is not null and expiry_announced = 0`.execute(trx);

    await trx.schema
      .createTable('subscriptions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('state_objects', 'messages')`))
      .addColumn('owner_connection_id', 'text', (c) => c.notNull().references('callers.connection_id'))
      .addColumn('credential_name', 'text', (c) => c.notNull())
      .addColumn('created_ms', 'integer', (c) => c.notNull())
      .addColumn('last_active_ms', 'integer', (c) => c.notNull())
      .addColumn('queued_messages', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await trx.schema
      .createIndex('subscriptions_by_owner')
      .on('subscriptions')
      .columns(['owner_connection_id'])
      .execute();

    // Filters are stored as GLOB patterns; exact_name is set when the name has no wildcard so the
    // usual "exactly this object" subscription is found through an index instead of a scan.
    await trx.schema
      .createTable('state_object_filters')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('subscription_id', 'text', (c) => c.notNull().references('subscriptions.id').onDelete('cascade'))
      .addColumn('sentinel_glob', 'text', (c) => c.notNull())
      .addColumn('package_glob', 'text', (c) => c.notNull())
      .addColumn('name_glob', 'text', (c) => c.notNull())
      .addColumn('type_glob', 'text', (c) => c.notNull())
      .addColumn('exact_name', 'text')
      .execute();
    await trx.schema
      .createIndex('state_object_filters_by_subscription')
      .on('state_object_filters')
      .columns(['subscription_id'])
      .execute();
    await trx.schema
      .createIndex('state_object_filters_by_exact_name')
      .on('state_object_filters')
      .columns(['exact_name'])
      .execute();

    // One row per (subscription, StateObject) changed since the subscription's last poll: coalescing.
    await trx.schema
      .createTable('state_object_changes')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('subscription_id', 'text', (c) => c.notNull().references('subscriptions.id').onDelete('cascade'))
      .addColumn('sentinel_name', 'text', (c) => c.notNull())
      .addColumn('package_name', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('is_deleted', 'integer', (c) => c.notNull())
      .addUniqueConstraint('state_object_changes_once', ['subscription_id', 'sentinel_name', 'package_name', 'name'])
      .execute();

    await trx.schema
      .createTable('message_group_members')
      .addColumn('subscription_id', 'text', (c) => c.notNull().references('subscriptions.id').onDelete('cascade'))
      .addColumn('group_name', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('message_group_members_pk', ['subscription_id', 'group_name'])
      .execute();
    await trx.schema
      .createIndex('message_group_members_by_group')
      .on('message_group_members')
      .columns(['group_name'])
      .execute();

    await trx.schema
      .createTable('messages')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('sender_connection_id', 'text', (c) => c.notNull())
      .addColumn('sender_type', 'integer', (c) => c.notNull())
      .addColumn('sender_friendly_name', 'text', (c) => c.notNull())
      .addColumn('scope', 'integer', (c) => c.notNull())
      .addColumn('args', 'text', (c) => c.notNull())
      .addColumn('saga_id', 'text')
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('data', 'text', (c) => c.notNull())
      .addColumn('sent_ms', 'integer', (c) => c.notNull())
      .execute();

    await trx.schema
      .createTable('message_deliveries')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('subscription_id', 'text', (c) => c.notNull().references('subscriptions.id').onDelete('cascade'))
      .addColumn('message_id', 'integer', (c) => c.notNull().references('messages.id').onDelete('cascade'))
      .execute();
    await trx.schema
      .createIndex('message_deliveries_by_subscription')
      .on('message_deliveries')
      .columns(['subscription_id', 'id'])
      .execute();
    await trx.schema
      .createIndex('message_deliveries_by_message')
      .on('message_deliveries')
      .columns(['message_id'])
      .execute();
    // subscriptions.queued_messages is kept exact by the database itself, so that bounding a queue
    // needs no count over the queue.
    await sql`create trigger message_deliveries_count_in after insert on message_deliveries begin
                update subscriptions set queued_messages = queued_messages + 1 where id = new.subscription_id;
              end`.execute(trx);
    await sql`create trigger message_deliveries_count_out after delete on message_deliveries begin
                update subscriptions set queued_messages = queued_messages - 1 where id = old.subscription_id;
              end`.execute(trx);

    await trx.schema
      .createTable('package_logs')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('sentinel_name', 'text', (c) => c.notNull())
      .addColumn('package_name', 'text', (c) => c.notNull())
      .addColumn('level', 'text', (c) => c.notNull().check(sql`level in ('Info', 'Warn', 'Error')`))
      .addColumn('message', 'text', (c) => c.notNull())
      .addColumn('logged_ms', 'integer', (c) => c.notNull())
      .execute();
    await trx.schema.createIndex('package_logs_by_time').on('package_logs').columns(['logged_ms']).execute();

    await trx.schema
      .createTable('package_descriptors')
      .addColumn('sentinel_name', 'text', (c) => c.notNull())
      .addColumn('package_name', 'text', (c) => c.notNull())
      .addColumn('descriptor', 'text', (c) => c.notNull())
      .addColumn('declared_ms', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('package_descriptors_pk', ['sentinel_name', 'package_name'])
      .execute();
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  const tables = [
    'package_descriptors',
    'package_logs',
    'message_deliveries',
    'messages',
    'message_group_members',
    'state_object_changes',
    'state_object_filters',
    'subscriptions',
    'state_objects',
    'callers',
    'package_instance_imports',
    'settings',
    'settings_groups',
    'package_instance_groups',
    'package_instances',
    'sentinels',
    'credentials',
    'hub_settings',
  ];
  await db.transaction().execute(async (trx) => {
    for (const table of tables) await trx.schema.dropTable(table).ifExists().execute();
  });
}
