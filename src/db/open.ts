/** Opens the hub's SQLite file with its pragmas and wraps it in Kysely, then brings the schema up to date. */
import fs from 'node:fs';
import path from 'node:path';
import Sqlite from 'better-sqlite3';
import type { Migration, MigrationProvider } from 'kysely';
import { Kysely, Migrator } from 'kysely';
import { migrations } from '../../migrations/index.js';
import { QueuedSqliteDialect } from './queuedDialect.js';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;

export interface OpenedDatabase {
  db: Db;
  /** The raw handle, for pragmas and the clean close (WAL checkpoint) only. */
  sqlite: Sqlite.Database;
}

/**
 * Kysely's SQLite driver prepares every query anew; caching statements by their SQL text saves that
 * work on the hot paths (push, poll, send), whose SQL repeats exactly.
 */
function withStatementCache(sqlite: Sqlite.Database) {
  const cache = new Map<string, Sqlite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare: (text: string) => {
      let statement = cache.get(text);
      if (!statement) {
        statement = sqlite.prepare(text);
        if (cache.size > 2000) cache.clear();
        cache.set(text, statement);
      }
      return statement;
    },
  };
}

const BUSY_TIMEOUT_MS = 50;

export { isDatabaseBusy } from '../errors.js';

/** `onCommit` receives the duration of every COMMIT in milliseconds (for metrics). */
export function openDatabase(file: string, sync: 'normal' | 'full', onCommit?: (ms: number) => void, lockWaitMs = 10_000): OpenedDatabase {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new Sqlite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`synchronous = ${sync === 'full' ? 'FULL' : 'NORMAL'}`);
  sqlite.pragma('foreign_keys = ON');
  // A person poking at the file with the sqlite3 CLI may hold the write lock. better-sqlite3 waits
  // synchronously, stalling every request, so the wait here is short: writes then wait on
  // asynchronously (db/batch.ts, db/queuedDialect.ts) up to `lockWaitMs`, then answer 503.
  sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  const db = new Kysely<Database>({
    dialect: new QueuedSqliteDialect({ database: withStatementCache(sqlite) }, { lockWaitMs, inTransaction: () => sqlite.inTransaction }),
    log: onCommit
      ? (event) => {
          if (event.level === 'query' && event.query.sql === 'commit') onCommit(event.queryDurationMillis);
        }
      : undefined,
  });
  return { db, sqlite };
}

const provider: MigrationProvider = {
  getMigrations: async (): Promise<Record<string, Migration>> => migrations,
};

export async function migrateToLatest(db: Db): Promise<void> {
  const { error, results } = await new Migrator({ db, provider, allowUnorderedMigrations: true }).migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    const reason = error instanceof Error ? error.message : String(error ?? 'unknown error');
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${reason}`);
  }
}

/** Checkpoints the WAL into the main file and closes, so the file alone holds everything. */
export async function closeDatabase({ db, sqlite }: OpenedDatabase): Promise<void> {
  try {
    sqlite.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    await db.destroy();
  }
}
