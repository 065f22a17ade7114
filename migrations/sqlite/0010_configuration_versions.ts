import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/**
 * The configuration lives in the XML file and in memory; the tables that mirrored it were written on
 * every change and never read by SQL, so they go. Two things stay in SQL: the groups of package
 * instances (message fan-out to a group joins them), now without a foreign key to the dropped instances
 * table, and the history: every version of the file the hub applied, wrote or was sent, with when and
 * by whom (readable with the sqlite3 CLI, restorable as docs/configuration.md says).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.schema
      .createTable('package_instance_groups_kept')
      .addColumn('sentinel_name', 'text', (c) => c.notNull())
      .addColumn('instance_name', 'text', (c) => c.notNull())
      .addColumn('group_name', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('package_instance_groups_kept_pk', ['sentinel_name', 'instance_name', 'group_name'])
      .execute();
    await sql`insert into package_instance_groups_kept select sentinel_name, instance_name, group_name from package_instance_groups`.execute(
      trx,
    );
    await trx.schema.dropTable('package_instance_groups').execute();
    await trx.schema.alterTable('package_instance_groups_kept').renameTo('package_instance_groups').execute();
    await trx.schema
      .createIndex('package_instance_groups_by_group')
      .on('package_instance_groups')
      .columns(['group_name'])
      .execute();
    for (const table of [
      'package_instance_imports',
      'settings',
      'package_instances',
      'sentinels',
      'settings_groups',
      'credentials',
    ]) {
      await trx.schema.dropTable(table).ifExists().execute();
    }
    await trx.schema
      .createTable('configuration_versions')
      .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      .addColumn('written_at', 'text', (c) => c.notNull())
      .addColumn('written_by', 'text', (c) => c.notNull())
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('applied', 'integer', (c) => c.notNull())
      .addColumn('text', 'text', (c) => c.notNull())
      .execute();
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('configuration_versions').ifExists().execute();
}
