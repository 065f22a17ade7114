/**
 * What SQL keeps of the configuration (the SQLite ConfigurationStore): the groups of package instances
 * message addressing joins on, and the history of the file's versions (the configuration itself is the
 * file, and memory while the hub runs). Each operation is one Kysely transaction (begun IMMEDIATE,
 * store/sqlite/database/queuedDialect.ts).
 */
import type { HubConfiguration } from '../../config/model.js';
import type { Db } from './database/open.js';
import type { ConfigurationStore, ConfigurationVersion } from '../../hub/ports/configuration.js';

/** Versions kept; older ones are deleted as new ones are recorded. */
const CONFIGURATION_VERSIONS_KEPT = 50;

export class SqliteConfigurationStore implements ConfigurationStore {
  constructor(private readonly db: Db) {}

  applied(version: ConfigurationVersion, config: HubConfiguration, options: { unlessNewest: boolean }): Promise<void> {
    return this.db.transaction().execute(async (trx) => {
      const latest = options.unlessNewest ? await latestConfigurationVersion(trx) : undefined;
      if (latest?.text !== version.text) await recordConfigurationVersion(trx, version);
      await replaceInstanceGroups(trx, config);
    });
  }

  record(version: ConfigurationVersion, config?: HubConfiguration): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const id = await recordConfigurationVersion(trx, version);
      if (config) await replaceInstanceGroups(trx, config);
      return id;
    });
  }

  revert(id: number, config?: HubConfiguration): Promise<void> {
    return this.db.transaction().execute(async (trx) => {
      await deleteConfigurationVersion(trx, id);
      if (config) await replaceInstanceGroups(trx, config);
    });
  }
}

/** Records a version and trims the history to the newest CONFIGURATION_VERSIONS_KEPT. Returns its id. */
async function recordConfigurationVersion(trx: Db, version: ConfigurationVersion, now = new Date()): Promise<number> {
  const row = await trx
    .insertInto('configuration_versions')
    .values({
      written_at: now.toISOString(),
      written_by: version.writtenBy,
      reason: version.reason,
      applied: version.applied ? 1 : 0,
      text: version.text,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await trx
    .deleteFrom('configuration_versions')
    .where('id', '<=', row.id - CONFIGURATION_VERSIONS_KEPT)
    .execute();
  return row.id;
}

/** Replaces the package instance groups SQL joins on (message fan-out) with those of `config`. */
async function replaceInstanceGroups(trx: Db, config: HubConfiguration): Promise<void> {
  await trx.deleteFrom('package_instance_groups').execute();
  const rows = config.sentinels.flatMap((s) =>
    s.packages.flatMap((p) => p.groups.map((g) => ({ sentinel_name: s.name, instance_name: p.name, group_name: g }))),
  );
  // SQLite limits the number of bound values in one statement.
  for (let i = 0; i < rows.length; i += 300)
    await trx
      .insertInto('package_instance_groups')
      .values(rows.slice(i, i + 300))
      .execute();
}

async function deleteConfigurationVersion(db: Db, id: number): Promise<void> {
  await db.deleteFrom('configuration_versions').where('id', '=', id).execute();
}

async function latestConfigurationVersion(db: Db): Promise<{ id: number; text: string } | undefined> {
  return db
    .selectFrom('configuration_versions')
    .select(['id', 'text'])
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}
