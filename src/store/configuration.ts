/**
 * What SQL keeps of the configuration: what queries join on (the groups of package instances), the
 * history of the file's versions (the configuration itself is the file, and memory while the hub runs),
 * and hub settings such as the license.
 */
import type { Kysely } from 'kysely';
import type { HubConfiguration } from '../config/model.js';
import type { Database } from '../db/schema.js';
import type { ConfigurationHistory, ConfigurationVersion } from './engine.js';

type Executor = Kysely<Database>;

/** Versions kept; older ones are deleted as new ones are recorded. */
export const CONFIGURATION_VERSIONS_KEPT = 50;

/** The SQLite ConfigurationHistory: each operation one transaction (Kysely's begin IMMEDIATE here, db/queuedDialect.ts). */
export class ConfigurationStore implements ConfigurationHistory {
  constructor(private readonly db: Executor) {}

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
async function recordConfigurationVersion(trx: Executor, version: ConfigurationVersion, now = new Date()): Promise<number> {
  const row = await trx
    .insertInto('configuration_versions')
    .values({ written_at: now.toISOString(), written_by: version.writtenBy, reason: version.reason, applied: version.applied ? 1 : 0, text: version.text })
    .returning('id')
    .executeTakeFirstOrThrow();
  await trx.deleteFrom('configuration_versions').where('id', '<=', row.id - CONFIGURATION_VERSIONS_KEPT).execute();
  return row.id;
}

/** Replaces the package instance groups SQL joins on (message fan-out) with those of `config`. */
async function replaceInstanceGroups(trx: Executor, config: HubConfiguration): Promise<void> {
  await trx.deleteFrom('package_instance_groups').execute();
  const rows = config.sentinels.flatMap((s) =>
    s.packages.flatMap((p) => p.groups.map((g) => ({ sentinel_name: s.name, instance_name: p.name, group_name: g }))),
  );
  // SQLite limits the number of bound values in one statement.
  for (let i = 0; i < rows.length; i += 300) await trx.insertInto('package_instance_groups').values(rows.slice(i, i + 300)).execute();
}

async function deleteConfigurationVersion(db: Executor, id: number): Promise<void> {
  await db.deleteFrom('configuration_versions').where('id', '=', id).execute();
}

async function latestConfigurationVersion(db: Executor): Promise<{ id: number; text: string } | undefined> {
  return db.selectFrom('configuration_versions').select(['id', 'text']).orderBy('id', 'desc').limit(1).executeTakeFirst();
}

export async function readHubSetting(db: Executor, key: string): Promise<string | undefined> {
  const row = await db.selectFrom('hub_settings').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value;
}

export async function writeHubSetting(db: Executor, key: string, value: string): Promise<void> {
  await db
    .insertInto('hub_settings')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
}
