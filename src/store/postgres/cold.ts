/**
 * The PostgreSQL engine's cold-path ports, each operation one statement or one transaction
 * (transaction.ts): package logs (numbered by the log's head row, so a follow never skips one),
 * descriptors, hub settings, the console's activity, the configuration's history and groups, and the
 * repository's catalogue.
 */
import type pg from 'pg';
import type { HubConfiguration } from '../../config/model.js';
import type { MessageAddresses, SentMessage } from '../../hub/messageAddresses.js';
import { isAddressedTo } from '../../hub/messageAddresses.js';
import type { ActivityStore, InstanceActivity } from '../../hub/ports/activity.js';
import type { ConfigurationStore, ConfigurationVersion } from '../../hub/ports/configuration.js';
import type { DescriptorStore, InstanceKey } from '../../hub/ports/descriptors.js';
import type { HubSettingStore } from '../../hub/ports/hubSettings.js';
import type { LogQuery, PackageLogEntry, PackageLogStore } from '../../hub/ports/packageLogs.js';
import type { RepositoryChange, RepositoryPackage, RepositoryStore } from '../../hub/ports/repository.js';
import { GroupCommit } from './groupCommit.js';
import { appendPackageLogs } from './logs.js';
import type { PostgresLog } from './pool.js';
import { storeError, transaction } from './transaction.js';

type Queryable = pg.Pool | pg.PoolClient;

/** One statement outside a transaction, its failure sorted as the hub expects (transaction.ts). */
async function query<R extends pg.QueryResultRow>(db: Queryable, text: string, values: unknown[] = []): Promise<R[]> {
  try {
    return (await db.query<R>(text, values)).rows;
  } catch (error) {
    throw storeError(error);
  }
}

// ---- package logs ----

type PackageLogRow = {
  id: number;
  sentinel_name: string;
  package_name: string;
  level: PackageLogEntry['level'];
  message: string;
  logged_ms: number;
};
const entryOf = (r: PackageLogRow): PackageLogEntry => ({
  id: r.id,
  sentinelName: r.sentinel_name,
  packageName: r.package_name,
  level: r.level,
  message: r.message,
  loggedMs: r.logged_ms,
});

export class PostgresPackageLogStore implements PackageLogStore {
  readonly #writes: GroupCommit<Omit<PackageLogEntry, 'id'>, number>;

  constructor(
    private readonly pool: pg.Pool,
    log: PostgresLog,
    announce?: (client: pg.PoolClient) => Promise<void>,
  ) {
    this.#writes = new GroupCommit({
      pool,
      log,
      write: (client, entries) =>
        appendPackageLogs(
          client,
          entries.map((e) => ({
            sentinel_name: e.sentinelName,
            package_name: e.packageName,
            level: e.level,
            message: e.message,
            logged_ms: e.loggedMs,
          })),
        ),
      afterCommit: announce && ((client) => announce(client)),
    });
  }

  write(entry: Omit<PackageLogEntry, 'id'>): Promise<number> {
    return this.#writes.submit(entry);
  }

  async read(q: LogQuery): Promise<PackageLogEntry[]> {
    const where: string[] = [];
    const values: unknown[] = [];
    const add = (condition: string, value: unknown) => {
      values.push(value);
      where.push(condition.replace('?', `$${values.length}`));
    };
    if (q.sentinelName) add('sentinel_name = ?', q.sentinelName);
    if (q.packageName) add('package_name = ?', q.packageName);
    if (q.level) add('level = ?', q.level);
    if (q.sinceMs !== undefined) add('logged_ms >= ?', q.sinceMs);
    if (q.afterId !== undefined) add('id > ?', q.afterId);
    values.push(q.limit);
    const filter = where.length > 0 ? `where ${where.join(' and ')}` : '';
    if (q.afterId !== undefined) {
      return (
        await query<PackageLogRow>(
          this.pool,
          `select * from package_logs ${filter} order by id limit $${values.length}`,
          values,
        )
      ).map(entryOf);
    }
    const rows = await query<PackageLogRow>(
      this.pool,
      `select * from package_logs ${filter} order by id desc limit $${values.length}`,
      values,
    );
    return rows.reverse().map(entryOf);
  }

  async trim(keep: number): Promise<number> {
    try {
      const result = await this.pool.query(
        'delete from package_logs where id <= (select id from package_logs order by id desc limit 1 offset $1)',
        [keep],
      );
      return result.rowCount ?? 0;
    } catch (error) {
      throw storeError(error);
    }
  }
}

// ---- descriptors, hub settings ----

export class PostgresDescriptorStore implements DescriptorStore {
  constructor(private readonly pool: pg.Pool) {}

  async save({ sentinelName, packageName }: InstanceKey, descriptor: string, now: number): Promise<void> {
    await query(
      this.pool,
      `insert into package_descriptors (sentinel_name, package_name, descriptor, declared_ms) values ($1, $2, $3, $4)
      on conflict (sentinel_name, package_name) do update set descriptor = excluded.descriptor, declared_ms = excluded.declared_ms`,
      [sentinelName, packageName, descriptor, now],
    );
  }

  async find({ sentinelName, packageName }: InstanceKey): Promise<string | undefined> {
    const rows = await query<{ descriptor: string }>(
      this.pool,
      'select descriptor from package_descriptors where sentinel_name = $1 and package_name = $2',
      [sentinelName, packageName],
    );
    return rows[0]?.descriptor;
  }

  all(): Promise<(InstanceKey & { descriptor: string })[]> {
    return query(
      this.pool,
      `select sentinel_name as "sentinelName", package_name as "packageName", descriptor
      from package_descriptors order by sentinel_name, package_name`,
    );
  }
}

const LICENSE_KEY = 'license';

export class PostgresHubSettingStore implements HubSettingStore {
  constructor(private readonly pool: pg.Pool) {}

  async license(): Promise<string | undefined> {
    return (
      await query<{ value: string }>(this.pool, 'select value from hub_settings where key = $1', [LICENSE_KEY])
    )[0]?.value;
  }

  async setLicense(text: string): Promise<void> {
    await query(
      this.pool,
      'insert into hub_settings (key, value) values ($1, $2) on conflict (key) do update set value = excluded.value',
      [LICENSE_KEY, text],
    );
  }
}

// ---- the console's activity ----

/** Unread messages are counted over this many of the newest log entries at most (a console view, not a scan of the log). */
const COUNTED_LOG_ENTRIES = 10_000;

export class PostgresActivityStore implements ActivityStore {
  constructor(private readonly pool: pg.Pool) {}

  /** One repeatable-read snapshot (it takes no write lock on PostgreSQL, unlike SQLite). */
  instances(): Promise<InstanceActivity> {
    return transaction(
      this.pool,
      async (client) => {
        const stateObjects = await client.query<
          InstanceKey & { n: number }
        >(`select sentinel_name as "sentinelName", package_name as "packageName",
        count(*) as n from state_objects where not is_deleted group by sentinel_name, package_name`);
        const subscriptions = await client.query<{
          id: string;
          kind: string;
          read_message_id: number;
          last_active_ms: number;
          connection_id: string;
          friendly_name: string;
          caller_kind: string;
          sentinel_name: string;
          package_name: string;
        }>(
          `select s.id, s.kind, s.read_message_id, s.last_active_ms, c.connection_id, c.friendly_name, c.kind as caller_kind, c.sentinel_name, c.package_name
         from subscriptions s join callers c on c.connection_id = s.owner_connection_id`,
        );
        const joined = (
          await client.query<{ subscription_id: string; group_name: string; joined_after: number }>(
            'select subscription_id, group_name, joined_after from message_group_members',
          )
        ).rows;
        const configured = (
          await client.query<{ sentinel_name: string; instance_name: string; group_name: string }>(
            'select sentinel_name, instance_name, group_name from package_instance_groups',
          )
        ).rows;
        const head = (await client.query<{ seq: number }>(`select seq from log_heads where log = 'messages'`)).rows[0]
          .seq;
        const log: SentMessage[] = (
          await client.query<{ id: number; scope: number; args: string; sender_connection_id: string }>(
            'select id, scope, args, sender_connection_id from messages where id > $1 order by id',
            [Math.max(0, head - COUNTED_LOG_ENTRIES)],
          )
        ).rows.map((m) => ({
          id: m.id,
          scope: m.scope,
          args: JSON.parse(m.args) as string[],
          senderConnectionId: m.sender_connection_id,
        }));
        const result = new Map<string, InstanceKey & { queued: number; lastActiveMs: number }>();
        for (const s of subscriptions.rows) {
          const key = `${s.sentinel_name}\u0000${s.package_name}`;
          let entry = result.get(key);
          if (!entry)
            result.set(
              key,
              (entry = { sentinelName: s.sentinel_name, packageName: s.package_name, queued: 0, lastActiveMs: 0 }),
            );
          entry.lastActiveMs = Math.max(entry.lastActiveMs, s.last_active_ms);
          if (s.kind !== 'messages') continue;
          const isPackage = s.caller_kind === 'package';
          const groups = new Map<string, number>();
          if (isPackage)
            for (const g of configured)
              if (g.sentinel_name === s.sentinel_name && g.instance_name === s.package_name)
                groups.set(g.group_name, 0);
          for (const g of joined)
            if (g.subscription_id === s.id && !groups.has(g.group_name)) groups.set(g.group_name, g.joined_after);
          const to: MessageAddresses = {
            connectionId: s.connection_id,
            friendlyName: s.friendly_name,
            isPackage,
            sentinelName: s.sentinel_name,
            packageName: s.package_name,
            groups,
          };
          entry.queued += log.filter((m) => m.id > s.read_message_id && isAddressedTo(m, to)).length;
        }
        const lastLogs = await client.query<
          InstanceActivity['lastLogs'][number]
        >(`select sentinel_name as "sentinelName", package_name as "packageName",
        level, message, logged_ms as "loggedMs" from package_logs
        where id in (select max(id) from package_logs group by sentinel_name, package_name)`);
        return { stateObjects: stateObjects.rows, subscriptions: [...result.values()], lastLogs: lastLogs.rows };
      },
      { isolation: 'repeatable read' },
    );
  }
}

// ---- the configuration's history and groups ----

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

// ---- the repository's catalogue ----

type RepositoryRow = {
  name: string;
  version: string;
  description: string;
  author: string;
  file_name: string;
  size: number;
  sha256: string;
  uploaded_ms: number;
  settings: string;
  icon: Buffer | null;
  xsds: string;
};
const packageOf = (r: RepositoryRow): RepositoryPackage => ({
  name: r.name,
  version: r.version,
  description: r.description,
  author: r.author,
  fileName: r.file_name,
  size: r.size,
  sha256: r.sha256,
  uploadedMs: r.uploaded_ms,
  settings: r.settings,
  icon: r.icon,
  xsds: r.xsds,
});

/** The archive `sha256` when, inside the same transaction, no package names it any more. */
async function unusedArchive(client: pg.PoolClient, sha256: string | undefined): Promise<string | undefined> {
  if (sha256 === undefined) return undefined;
  const { rows } = await client.query('select 1 from repository_packages where sha256 = $1 limit 1', [sha256]);
  return rows.length === 0 ? sha256 : undefined;
}

export class PostgresRepositoryStore implements RepositoryStore {
  constructor(private readonly pool: pg.Pool) {}

  async list(): Promise<RepositoryPackage[]> {
    return (await query<RepositoryRow>(this.pool, 'select * from repository_packages order by name')).map(packageOf);
  }

  async find(name: string): Promise<RepositoryPackage | undefined> {
    const rows = await query<RepositoryRow>(this.pool, 'select * from repository_packages where name = $1', [name]);
    return rows[0] && packageOf(rows[0]);
  }

  replace(p: RepositoryPackage): Promise<RepositoryChange> {
    return transaction(this.pool, async (client) => {
      const previous = (
        await client.query<{ sha256: string }>('select sha256 from repository_packages where name = $1 for update', [
          p.name,
        ])
      ).rows[0];
      await client.query(
        `insert into repository_packages (name, version, description, author, file_name, size, sha256, uploaded_ms, settings, icon, xsds)
        values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
        on conflict (name) do update set version = excluded.version, description = excluded.description, author = excluded.author,
          file_name = excluded.file_name, size = excluded.size, sha256 = excluded.sha256, uploaded_ms = excluded.uploaded_ms,
          settings = excluded.settings, icon = excluded.icon, xsds = excluded.xsds`,
        [
          p.name,
          p.version,
          p.description,
          p.author,
          p.fileName,
          p.size,
          p.sha256,
          p.uploadedMs,
          p.settings,
          p.icon,
          p.xsds,
        ],
      );
      return { unusedArchive: await unusedArchive(client, previous?.sha256) };
    });
  }

  rename(name: string, newName: string): Promise<'renamed' | 'missing' | 'taken'> {
    return transaction(this.pool, async (client) => {
      if (
        (await client.query('select 1 from repository_packages where name = $1 for update', [name])).rows.length === 0
      )
        return 'missing';
      if (name === newName) return 'renamed';
      // The unique name decides between two processes renaming to the same name at once.
      const moved = await client
        .query(
          `update repository_packages set name = $2 where name = $1
        and not exists (select 1 from repository_packages where name = $2)`,
          [name, newName],
        )
        .catch((error: unknown) => {
          if ((error as { code?: string }).code === '23505') return { rowCount: 0 };
          throw error;
        });
      return (moved.rowCount ?? 0) > 0 ? 'renamed' : 'taken';
    });
  }

  remove(name: string): Promise<RepositoryChange | undefined> {
    return transaction(this.pool, async (client) => {
      const { rows } = await client.query<{ sha256: string }>(
        'delete from repository_packages where name = $1 returning sha256',
        [name],
      );
      if (rows.length === 0) return undefined;
      return { unusedArchive: await unusedArchive(client, rows[0].sha256) };
    });
  }
}
