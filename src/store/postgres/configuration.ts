/**
 * The configuration's history and groups on PostgreSQL (the PostgreSQL ConfigurationStore): each
 * operation one transaction (transaction.ts).
 */
import type pg from 'pg';
import type { HubConfiguration } from '../../config/model.js';
import type { ConfigurationStore, ConfigurationVersion } from '../../hub/ports/configuration.js';
import { transaction } from './transaction.js';

const CONFIGURATION_VERSIONS_KEPT = 50;

export class PostgresConfigurationStore implements ConfigurationStore {
  constructor(private readonly pool: pg.Pool) {}

  applied(version: ConfigurationVersion, config: HubConfiguration, options: { unlessNewest: boolean }): Promise<void> {
    return transaction(this.pool, async (client) => {
      const latest = options.unlessNewest
        ? (await client.query<{ text: string }>('select text from configuration_versions order by id desc limit 1'))
            .rows[0]
        : undefined;
      if (latest?.text !== version.text) await recordVersion(client, version);
      await replaceInstanceGroups(client, config);
    });
  }

  record(version: ConfigurationVersion, config?: HubConfiguration): Promise<number> {
    return transaction(this.pool, async (client) => {
      const id = await recordVersion(client, version);
      if (config) await replaceInstanceGroups(client, config);
      return id;
    });
  }

  revert(id: number, config?: HubConfiguration): Promise<void> {
    return transaction(this.pool, async (client) => {
      await client.query('delete from configuration_versions where id = $1', [id]);
      if (config) await replaceInstanceGroups(client, config);
    });
  }
}

async function recordVersion(client: pg.PoolClient, version: ConfigurationVersion): Promise<number> {
  const { rows } = await client.query<{ id: number }>(
    `insert into configuration_versions (written_at, written_by, reason, applied, text)
    values ($1, $2, $3, $4, $5) returning id`,
    [new Date().toISOString(), version.writtenBy, version.reason, version.applied, version.text],
  );
  await client.query('delete from configuration_versions where id <= $1', [rows[0].id - CONFIGURATION_VERSIONS_KEPT]);
  return rows[0].id;
}

async function replaceInstanceGroups(client: pg.PoolClient, config: HubConfiguration): Promise<void> {
  await client.query('delete from package_instance_groups');
  const rows = config.sentinels.flatMap((s) => s.packages.flatMap((p) => p.groups.map((g) => [s.name, p.name, g])));
  if (rows.length === 0) return;
  await client.query(
    `insert into package_instance_groups (sentinel_name, instance_name, group_name)
    select * from unnest($1::text[], $2::text[], $3::text[]) on conflict do nothing`,
    [rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2])],
  );
}
