/** Opens the hub's SQLite file with its pragmas and wraps it in Kysely, then brings the schema up to date. */
import fs from 'node:fs';
import path from 'node:path';
import Sqlite from 'better-sqlite3';
import type { Migration, MigrationProvider } from 'kysely';
import { Kysely, Migrator } from 'kysely';
import { migrations } from '../../../../migrations/sqlite/index.js';
import { QueuedSqliteDialect } from './queuedDialect.js';
import type { Database } from './schema.js';
import { dataDirectory } from '../../../dataDirectory.js';
import { PRIVATE_FILE, privateFile } from '../../../privateFiles.js';

export type Db = Kysely<Database>;

export interface OpenedDatabase {
  db: Db;
  /** The raw handle, for pragmas and the clean close (WAL checkpoint) only. */
  sqlite: Sqlite.Database;
  /** The file predates incremental auto-vacuum and was rebuilt (VACUUM) once at this start to switch. */
  switchedToIncrementalVacuum: boolean;
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

/** `onCommit` receives the duration of every COMMIT in milliseconds (for metrics). */
export function openDatabase(
  file: string,
  sync: 'normal' | 'full',
  onCommit?: (ms: number) => void,
  lockWaitMs = 10_000,
): OpenedDatabase {
  dataDirectory(path.dirname(file));
  // The file holds every access key in clear: 0600. SQLite gives the -wal and -shm files the mode of
  // the database file, so creating it 0600 before SQLite does covers all three; older files are fixed.
  fs.closeSync(fs.openSync(file, 'a', PRIVATE_FILE));
  for (const suffix of ['', '-wal', '-shm']) privateFile(`${file}${suffix}`);
  const sqlite = new Sqlite(file);
  const switchedToIncrementalVacuum = useIncrementalVacuum(sqlite);
  sqlite.pragma('journal_mode = WAL');
  // After a checkpoint the WAL is cut back to this size instead of staying at its largest.
  sqlite.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT_BYTES}`);
  sqlite.pragma(`synchronous = ${sync === 'full' ? 'FULL' : 'NORMAL'}`);
  sqlite.pragma('foreign_keys = ON');
  // A person poking at the file with the sqlite3 CLI may hold the write lock. better-sqlite3 waits
  // synchronously, stalling every request, so the wait here is short: writes then wait on
  // asynchronously (store/sqlite/database/batch.ts, store/sqlite/database/queuedDialect.ts) up to `lockWaitMs`, then answer 503.
  sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  const db = new Kysely<Database>({
    dialect: new QueuedSqliteDialect(
      { database: withStatementCache(sqlite) },
      { lockWaitMs, inTransaction: () => sqlite.inTransaction },
    ),
    log: onCommit
      ? (event) => {
          if (event.level === 'query' && event.query.sql === 'commit') onCommit(event.queryDurationMillis);
        }
      : undefined,
  });
  return { db, sqlite, switchedToIncrementalVacuum };
}

const JOURNAL_SIZE_LIMIT_BYTES = 16 * 1024 * 1024;

/**
 * Free pages go back to the file system (incrementalVacuum below) only in auto_vacuum=INCREMENTAL
 * mode. A new file takes it before its first table; an existing file needs one VACUUM to switch,
 * which rewrites it (the time of one copy of the database, once).
 */
function useIncrementalVacuum(sqlite: Sqlite.Database): boolean {
  const INCREMENTAL = 2;
  if (sqlite.pragma('auto_vacuum', { simple: true }) === INCREMENTAL) return false;
  sqlite.pragma('auto_vacuum = INCREMENTAL');
  const hasTables = (sqlite.prepare('select count(*) from sqlite_master').pluck().get() as number) > 0;
  if (!hasTables) return false;
  sqlite.exec('VACUUM');
  return true;
}

/** Pages freed per run: about 8 MiB, a few milliseconds of work, so the event loop is barely held. */
export const VACUUM_PAGES_PER_RUN = 2048;

/**
 * Gives up to VACUUM_PAGES_PER_RUN free pages back to the file system; returns how many were freed.
 * Skipped while a transaction is open on the connection; a write lock held by another process
 * (SQLITE_BUSY) is left for the next run.
 */
export function incrementalVacuum(sqlite: Sqlite.Database): number {
  if (sqlite.inTransaction) return 0;
  const free = sqlite.pragma('freelist_count', { simple: true }) as number;
  if (free === 0) return 0;
  sqlite.pragma(`incremental_vacuum(${Math.min(free, VACUUM_PAGES_PER_RUN)})`);
  const freed = free - (sqlite.pragma('freelist_count', { simple: true }) as number);
  // In WAL mode the vacuum only shortens the database in the WAL: hub.db itself is cut when a
  // checkpoint copies that commit back. The automatic checkpoint waits for 1,000 more pages of
  // writes, which an idle hub after a purge never makes, so the file would keep its size. A passive
  // checkpoint never waits for readers or writers; what it cannot copy now, a later one does.
  if (freed > 0) sqlite.pragma('wal_checkpoint(PASSIVE)');
  return freed;
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
