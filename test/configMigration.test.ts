/** Migration 0010 on a database that used the old configuration tables: they go, the groups stay. */
import { Migrator, sql } from 'kysely';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrations } from '../migrations/sqlite/index.js';
import { closeDatabase, migrateToLatest, openDatabase } from '../src/store/sqlite/database/open.js';
import { tempDir } from './support/testHub.js';

describe('migration 0010', () => {
  it('drops the mirror tables of an existing database and keeps the package instance groups', async () => {
    const database = openDatabase(path.join(tempDir(), 'hub.db'), 'normal');
    const { db } = database;
    try {
      const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
      const upTo = await migrator.migrateTo('0002_repository');
      expect(upTo.error).toBeUndefined();
      await sql`insert into credentials (name, access_key, enabled, enable_control_hub, enable_management_api, enable_developer_access, authorizations) values ('Dev', 'k', 1, 0, 0, 0, '{}')`.execute(
        db,
      );
      await sql`insert into sentinels (name, credential_name) values ('S1', 'Dev')`.execute(db);
      await sql`insert into package_instances (sentinel_name, name, package_file, enabled, credential_name, auto_start, recovery_options) values ('S1', 'P1', null, 1, null, 1, null)`.execute(
        db,
      );
      await sql`insert into package_instance_groups (sentinel_name, instance_name, group_name) values ('S1', 'P1', 'Lights')`.execute(
        db,
      );
      await sql`insert into settings_groups (name) values ('G')`.execute(db);
      await sql`insert into package_instance_imports (sentinel_name, instance_name, position, settings_group_name) values ('S1', 'P1', 0, 'G')`.execute(
        db,
      );

      await migrateToLatest(db);

      const tables = database.sqlite
        .prepare("select name from sqlite_master where type = 'table' order by name")
        .pluck()
        .all() as string[];
      for (const gone of [
        'credentials',
        'sentinels',
        'package_instances',
        'settings_groups',
        'settings',
        'package_instance_imports',
      ])
        expect(tables).not.toContain(gone);
      expect(tables).toEqual(
        expect.arrayContaining(['package_instance_groups', 'configuration_versions', 'hub_settings']),
      );
      expect(database.sqlite.prepare('select * from package_instance_groups').all()).toEqual([
        { sentinel_name: 'S1', instance_name: 'P1', group_name: 'Lights' },
      ]);
      // No foreign key ties the groups to a table that no longer exists.
      database.sqlite.prepare("insert into package_instance_groups values ('S9', 'P9', 'Any')").run();
      expect(database.sqlite.pragma('foreign_key_check')).toEqual([]);
    } finally {
      await closeDatabase(database);
    }
  });
});
