/**
 * Connections to PostgreSQL (issue 22): one `pg` pool per role, every connection named and bounded.
 *
 * - `application_name` is `hub:<pid>:<role>` (write, store, tail, listen, migrate; config and copy for
 *   the CLI's commands: docs/operations.md), so an operator
 *   (and a test) can find or kill exactly one process's connection of one role in `pg_stat_activity`.
 * - Every connection starts with `lock_timeout` (HUB_LOCK_WAIT_MS) and
 *   `idle_in_transaction_session_timeout` (a process that vanished mid-transaction cannot hold a log's
 *   head row for longer), sent as startup parameters.
 * - `synchronous_commit` follows HUB_SYNC: `full` → `on` (an acknowledged write survives a crash of
 *   PostgreSQL itself); `normal` → `off`: nothing is lost when a hub process is killed or PostgreSQL
 *   restarts cleanly, but a crash of PostgreSQL (or its machine) may lose the last ~3 × wal_writer_delay
 *   (0.6 s by default) of acknowledged writes — SQLite's `synchronous=NORMAL` trade (docs/operations.md).
 * - A pool never crashes the process: `pool.on('error')` (an idle connection dropped by a PostgreSQL
 *   restart) and an error listener on every client (a checked-out connection killed between two
 *   statements) log and let the pool drop the connection; the operation in progress fails on its own.
 * - int8 and numeric counts arrive as JavaScript numbers (every id, sequence and time is < 2^53).
 */
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';

/** What the pool reports through (pino's Logger fits). */
export interface PostgresLog {
  warn(object: object, message: string): void;
}

export interface PostgresConnectionOptions {
  /** postgres://user@host:port/database (HUB_DATABASE_URL). */
  url: string;
  /** The connection's role, in its application_name: `hub:<pid>:<role>`. */
  role: string;
  /** HUB_SYNC. */
  sync: 'normal' | 'full';
  /** lock_timeout, and how long a request waits for a free connection (HUB_LOCK_WAIT_MS). */
  lockWaitMs: number;
  /** idle_in_transaction_session_timeout; default 5 s. */
  idleInTransactionMs?: number;
  /** How long opening one connection may take; default 5 s. */
  connectTimeoutMs?: number;
  log: PostgresLog;
}

export interface PostgresPoolOptions extends PostgresConnectionOptions {
  /** Connections in the pool (HUB_PG_POOL_MAX); default 8. */
  max?: number;
}

const INT8 = 20;
const NUMERIC = 1700;

/** Per-connection type parsers: int8 and numeric as numbers, the rest as pg's defaults. */
export const numberTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) => {
    if ((oid === INT8 || oid === NUMERIC) && format !== 'binary') return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as 'text');
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/** The application_name of this process's connections of `role`. */
export const applicationName = (role: string) => `hub:${process.pid}:${role}`;

/** `synchronous_commit` for HUB_SYNC (see the file's comment for what `normal` may lose). */
export const synchronousCommit = (sync: 'normal' | 'full') => (sync === 'full' ? 'on' : 'off');

/** The configuration of one connection of `role` (also used for the listener's own Client). */
export function clientConfig(options: PostgresConnectionOptions): pg.ClientConfig {
  return {
    connectionString: options.url,
    application_name: applicationName(options.role),
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    lock_timeout: options.lockWaitMs,
    idle_in_transaction_session_timeout: options.idleInTransactionMs ?? 5_000,
    options: `-c synchronous_commit=${synchronousCommit(options.sync)}`,
    keepAlive: true,
    types: numberTypes,
  };
}

/** A pool whose connections carry the settings above and whose failures are logged, never thrown. */
export function createPool(options: PostgresPoolOptions): pg.Pool {
  const pool = new pg.Pool({
    ...clientConfig(options),
    max: options.max ?? 8,
    idleTimeoutMillis: 30_000,
    maxLifetimeSeconds: 3_600,
    // An exhausted pool makes a request fail (503) instead of waiting forever (pg's default).
    connectionTimeoutMillis: Math.max(options.lockWaitMs, options.connectTimeoutMs ?? 5_000),
  });
  const role = options.role;
  pool.on('error', (error) => {
    options.log.warn(
      { role, err: error.message, code: (error as { code?: string }).code },
      'PostgreSQL connection lost (idle)',
    );
  });
  pool.on('connect', (client) => {
    client.on('error', (error) => {
      options.log.warn(
        { role, err: error.message, code: (error as { code?: string }).code },
        'PostgreSQL connection lost',
      );
    });
  });
  return pool;
}

/** Kysely over a pool of `role` (Kysely's own PostgresDialect); `destroy()` ends the pool. */
export function openPostgres<Database>(options: PostgresPoolOptions): { db: Kysely<Database>; pool: pg.Pool } {
  const pool = createPool(options);
  return { db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), pool };
}
