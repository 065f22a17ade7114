/**
 * The configuration on PostgreSQL: its history and groups (the ConfigurationStore), and the document
 * every hub process applies (the ConfigurationDocumentStore, table `configuration_document`, one row).
 * Each operation is one transaction (transaction.ts). A change of the document commits only on the
 * version it was built on (`update … where version = $base`), and after its COMMIT rings the other
 * processes (NOTIFY `hub_configuration`), which re-read the row.
 */
import type pg from 'pg';
import type { HubConfiguration } from '../../../config/model.js';
import type {
  ConfigurationDocumentStore,
  ConfigurationStore,
  ConfigurationVersion,
  StoredConfiguration,
} from '../../../hub/ports/configuration.js';
import { notifyCommitted } from '../feed/listener.js';
import { migratePostgres } from '../connections/migrate.js';
import type { PostgresConnectionOptions, PostgresLog } from '../connections/pool.js';
import { createPool, openPostgres } from '../connections/pool.js';
import { transaction } from '../connections/transaction.js';
import { CONFIGURATION_CHANNEL } from '../feed/channels.js';

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

interface DocumentRow {
  version: number;
  text: string;
  pending: string | null;
}

const stored = (row: DocumentRow): StoredConfiguration => ({
  version: Number(row.version),
  text: row.text,
  pending: row.pending ?? undefined,
});

export class PostgresConfigurationDocumentStore implements ConfigurationDocumentStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly log: PostgresLog,
  ) {}

  async read(): Promise<StoredConfiguration | undefined> {
    const { rows } = await transaction(this.pool, (client) =>
      client.query<DocumentRow>('select version, text, pending from configuration_document'),
    );
    return rows[0] && stored(rows[0]);
  }

  async importIfNone(
    history: ConfigurationVersion,
    config: HubConfiguration,
  ): Promise<{ document: StoredConfiguration; imported: boolean }> {
    const result = await transaction(this.pool, async (client) => {
      const inserted = await client.query<DocumentRow>(
        `insert into configuration_document (version, text) values (1, $1)
         on conflict (id) do nothing returning version, text, pending`,
        [history.text],
      );
      if (inserted.rows[0]) {
        await recordVersion(client, history);
        await replaceInstanceGroups(client, config);
        return { document: stored(inserted.rows[0]), imported: true };
      }
      const { rows } = await client.query<DocumentRow>('select version, text, pending from configuration_document');
      return { document: stored(rows[0]), imported: false };
    });
    if (result.imported) await this.announce();
    return result;
  }

  async replace(
    base: number,
    next: { text: string; pending: string | undefined },
    history: ConfigurationVersion,
    config?: HubConfiguration,
  ): Promise<StoredConfiguration | undefined> {
    const result = await transaction(this.pool, async (client) => {
      const { rows } = await client.query<DocumentRow>(
        `update configuration_document set version = version + 1, text = $2, pending = $3
         where version = $1 returning version, text, pending`,
        [base, next.text, next.pending ?? null],
      );
      if (!rows[0]) return undefined;
      await recordVersion(client, history);
      if (config) await replaceInstanceGroups(client, config);
      return stored(rows[0]);
    });
    if (result) await this.announce();
    return result;
  }

  /** After the COMMIT; a notification lost here is caught up by the other processes' fallback reads. */
  private async announce(): Promise<void> {
    await notifyCommitted(this.pool, '', CONFIGURATION_CHANNEL).catch((error: unknown) =>
      this.log.warn({ err: (error as Error).message }, 'configuration change committed but not announced'),
    );
  }
}

async function recordVersion(client: pg.PoolClient | pg.Client, version: ConfigurationVersion): Promise<number> {
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

/**
 * The configuration document alone, for `hub config import|export` (cli.ts, through store/commands.ts): the database migrated
 * first (an empty database gets its tables), then one connection named `hub:<pid>:config`.
 */
export async function openConfigurationDocuments(
  options: Omit<PostgresConnectionOptions, 'role'>,
): Promise<{ documents: ConfigurationDocumentStore; close(): Promise<void> }> {
  const { db } = openPostgres({ ...options, role: 'migrate', max: 1 });
  await migratePostgres(db).finally(() => db.destroy());
  const pool = createPool({ ...options, role: 'config', max: 1 });
  return { documents: new PostgresConfigurationDocumentStore(pool, options.log), close: () => pool.end() };
}
