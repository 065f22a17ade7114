/**
 * Moving house (issue 22): copies a hub's SQLite file (hub.db) into an empty PostgreSQL database in
 * one transaction, so that a hub started on that database with HUB_DATABASE_URL carries on where the
 * SQLite one stopped: objects with their sequence numbers, subscriptions with their cursors, filters
 * (GLOBs back to the wire's `*` patterns), joined groups, the message log with its ids, saga requests,
 * package logs, descriptors, the configuration history, the repository (its catalogue, and its archives
 * from the `repository/` folder beside hub.db, each checked against its SHA-256) and the hub settings.
 * Each log's head is set past every number in use (rows and cursors), so numbering continues.
 *
 * It refuses, changing nothing: a database that is not empty, a SQLite file a hub has not brought up
 * to date (start the hub on it once), and one that still holds deliveries from before the logs
 * (migration 0003: let every subscription poll once first), and a repository archive that is missing
 * or does not match its hash. Stop the SQLite hub before copying.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import Sqlite from 'better-sqlite3';
import type pg from 'pg';
import type { Row } from './fromSqliteTables.js';
import { TABLES } from './fromSqliteTables.js';
import { migratePostgres } from '../postgres/connections/migrate.js';
import type { PostgresLog } from '../postgres/connections/pool.js';
import { createPool, openPostgres } from '../postgres/connections/pool.js';
import { storeArchive } from '../postgres/ports/repository.js';

export interface CopyFromSqliteOptions {
  /** The SQLite file (HUB_DATA_DIR/hub.db). */
  sqliteFile: string;
  /** The PostgreSQL database (HUB_DATABASE_URL). */
  url: string;
  log: PostgresLog;
}

/** Rows copied per table. */
export type CopyReport = Record<string, number>;

/** What the SQLite file must have seen for its schema to be the one copied here. */
const LAST_SQLITE_MIGRATION = '0011_pending_deliveries';

const CHUNK = 500;

export async function copySqliteToPostgres(options: CopyFromSqliteOptions): Promise<CopyReport> {
  const sqlite = new Sqlite(options.sqliteFile, { readonly: true, fileMustExist: true });
  try {
    const ran = sqlite.prepare('select name from kysely_migration').pluck().all() as string[];
    if (!ran.includes(LAST_SQLITE_MIGRATION)) {
      throw new Error(
        `${options.sqliteFile} has not been brought up to date: start the hub on it once, stop it, then copy`,
      );
    }
    const legacy = sqlite
      .prepare('select (select count(*) from state_object_changes) + (select count(*) from message_deliveries)')
      .pluck()
      .get() as number;
    if (legacy > 0) {
      throw new Error(
        `${options.sqliteFile} still holds ${legacy} deliveries from before the logs: let every subscription poll once, then copy`,
      );
    }
    await refuseForeignTables(options);
    const { db } = openPostgres({
      url: options.url,
      role: 'migrate',
      sync: 'full',
      lockWaitMs: 10_000,
      log: options.log,
      max: 1,
    });
    await migratePostgres(db).finally(() => db.destroy());
    const pool = copyPool(options);
    try {
      const client = await pool.connect();
      try {
        await client.query('begin');
        try {
          const report = await copyAll(sqlite, client);
          report.repository_archives = await copyArchives(sqlite, client, path.dirname(options.sqliteFile));
          await client.query('commit');
          return report;
        } catch (error) {
          await client.query('rollback').catch(() => {});
          throw error;
        }
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
    }
  } finally {
    sqlite.close();
  }
}

/** The tables of migrations/postgres/ and of Kysely's migrator (test/cliPostgres.test.ts copies into a migrated database). */
const HUB_TABLES = new Set([
  ...['auth_failures', 'callers', 'configuration_document', 'configuration_versions', 'credential_subscriptions'],
  ...['hub_processes', 'hub_settings', 'log_heads', 'message_group_members', 'messages', 'package_descriptors'],
  ...['package_instance_groups', 'package_logs', 'repository_archives', 'repository_packages', 'saga_requests'],
  ...['state_object_filters', 'state_objects', 'subscriptions', 'kysely_migration', 'kysely_migration_lock'],
]);

/** One connection to the target database, for the copy's own statements. */
const copyPool = (options: CopyFromSqliteOptions) =>
  createPool({ url: options.url, role: 'copy', sync: 'full', lockWaitMs: 10_000, log: options.log, max: 1 });

/**
 * Refuses, before anything is created in it, a database holding any table (or view) the hub's
 * migrations do not make: the hub's tables belong in a database of their own, and the copy must not
 * leave its tables among someone else's.
 */
async function refuseForeignTables(options: CopyFromSqliteOptions): Promise<void> {
  const pool = copyPool(options);
  try {
    const { rows } = await pool.query<{ name: string; database: string }>(
      `select case when n.nspname = 'public' then c.relname else n.nspname || '.' || c.relname end as name,
        current_database() as database
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where c.relkind in ('r', 'p', 'v', 'm', 'f') and n.nspname not in ('pg_catalog', 'information_schema')
        and n.nspname not like 'pg_toast%' and n.nspname not like 'pg_temp%'
      order by 1`,
    );
    const foreign = rows.map((r) => r.name).filter((name) => !HUB_TABLES.has(name));
    if (foreign.length > 0)
      throw new Error(
        `the PostgreSQL database "${rows[0].database}" holds tables that are not the hub's (${foreign.slice(0, 10).join(', ')}${foreign.length > 10 ? ', …' : ''}): the hub's tables belong in a database of their own. Create an empty one (createdb) and copy into it; nothing was changed`,
      );
  } finally {
    await pool.end();
  }
}

async function copyAll(sqlite: Sqlite.Database, client: pg.PoolClient): Promise<CopyReport> {
  const present = await client.query<{
    n: number;
  }>(`select (select count(*) from callers) + (select count(*) from state_objects)
    + (select count(*) from messages) + (select count(*) from configuration_versions) + (select count(*) from package_logs)
    + (select count(*) from repository_packages) + (select coalesce(sum(seq), 0) from log_heads) as n`);
  if (present.rows[0].n > 0)
    throw new Error(
      "the PostgreSQL database is not empty (it holds a hub's data): copy into a new, empty database (createdb); nothing was changed",
    );
  const report: CopyReport = {};
  for (const { table, from, columns, values } of TABLES) {
    const rows = sqlite.prepare(from).all() as Row[];
    for (let i = 0; i < rows.length; i += CHUNK) {
      const chunk = rows.slice(i, i + CHUNK);
      const params: unknown[] = [];
      const tuples = chunk.map((row) => {
        const first = params.length;
        params.push(...values(row));
        return `(${columns.map((_, j) => `$${first + j + 1}`).join(', ')})`;
      });
      await client.query(`insert into ${table} (${columns.join(', ')}) values ${tuples.join(', ')}`, params);
    }
    report[table] = rows.length;
  }
  // Numbering continues past every number in use, rows and cursors alike.
  const top = (sql: string) => (sqlite.prepare(sql).pluck().get() as number | null) ?? 0;
  const heads = {
    state_objects: Math.max(
      top('select max(seq) from state_objects'),
      top('select max(read_seq) from state_object_filters'),
      top('select max(created_seq) from state_object_filters'),
    ),
    messages: Math.max(
      top('select max(id) from messages'),
      top('select max(read_message_id) from subscriptions'),
      top('select max(joined_after) from message_group_members'),
    ),
    package_logs: top('select max(id) from package_logs'),
  };
  for (const [log, seq] of Object.entries(heads))
    await client.query('update log_heads set seq = $2 where log = $1', [log, seq]);
  for (const table of ['configuration_versions', 'state_object_filters']) {
    await client.query(
      `select setval(pg_get_serial_sequence($1, 'id'), coalesce((select max(id) from ${table}), 0) + 1, false)`,
      [table],
    );
  }
  return report;
}

/** Each archive the catalogue names, from `<dataDir>/repository/<sha256>.zip`, checked against its hash. */
async function copyArchives(sqlite: Sqlite.Database, client: pg.PoolClient, dataDir: string): Promise<number> {
  const named = sqlite.prepare('select sha256, min(name) as name from repository_packages group by sha256').all() as {
    sha256: string;
    name: string;
  }[];
  for (const { sha256, name } of named) {
    const file = path.join(dataDir, 'repository', `${sha256}.zip`);
    if (!fs.existsSync(file)) throw new Error(`the archive of repository package '${name}' is missing (${file})`);
    const hash = createHash('sha256');
    await pipeline(fs.createReadStream(file), hash);
    if (hash.digest('hex') !== sha256)
      throw new Error(`the archive of repository package '${name}' does not match its SHA-256 (${file})`);
    await storeArchive(client, sha256, file);
  }
  return named.length;
}
