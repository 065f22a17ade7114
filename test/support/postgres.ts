/**
 * PostgreSQL for tests, two ways (issue 22, docs/operations.md "Several processes on PostgreSQL"):
 *
 * - The machine's shared server (`HUB_TEST_POSTGRES_URL`, default postgres://postgres@127.0.0.1:5432/postgres,
 *   trust authentication): `testDatabase()` creates a fresh database `hub_t_<random>` for one test file
 *   and drops it afterwards, so files run in parallel. When the server is unreachable the PostgreSQL
 *   suites skip and say so, unless `HUB_TEST_POSTGRES=required` (set by .ci/run), which fails them.
 * - A throwaway cluster (`throwawayCluster()`): initdb + pg_ctl on a temp directory and a free port, as
 *   the postgres user when run as root, for tests that kill or restart PostgreSQL. The shared server is
 *   never restarted.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { openPostgresHubStore } from '../../src/store/postgres/hubStore.js';
import type { PostgresHubStore, PostgresHubStoreOptions } from '../../src/store/postgres/hubStore.js';
import type { NewMessage, NewStateObject } from '../../src/store/postgres/connections/logs.js';
import { migratePostgres } from '../../src/store/postgres/connections/migrate.js';
import { createPool, numberTypes, openPostgres } from '../../src/store/postgres/connections/pool.js';
import type { PostgresLog } from '../../src/store/postgres/connections/pool.js';
import { afterFile, tempDir } from './afterFile.js';
import { stablePort } from './ports.js';
import { until } from './until.js';

const run = promisify(execFile);

/** A database on the shared server to connect to as administrator (create and drop databases). */
const ADMIN_URLS = process.env.HUB_TEST_POSTGRES_URL
  ? [process.env.HUB_TEST_POSTGRES_URL]
  : ['postgres://postgres@127.0.0.1:5432/postgres', 'postgres://root@127.0.0.1:5432/postgres'];

const required = () => process.env.HUB_TEST_POSTGRES === 'required';

export interface PostgresServer {
  /** Reachable: the suites run. */
  available: boolean;
  /** An administrator URL on the server (when available). */
  adminUrl: string;
  /** Why it is not available. */
  reason: string;
}

let probed: Promise<PostgresServer> | undefined;

async function tryConnect(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Whether the shared server answers. With `HUB_TEST_POSTGRES=required` an unreachable server throws
 * (the file fails); otherwise it prints once per file that the PostgreSQL suites skip.
 */
export function postgresServer(): Promise<PostgresServer> {
  probed ??= (async () => {
    const reasons: string[] = [];
    for (const url of ADMIN_URLS) {
      const failure = await tryConnect(url);
      if (failure === undefined) return { available: true, adminUrl: url, reason: '' };
      reasons.push(`${redact(url)}: ${failure}`);
    }
    const reason = `PostgreSQL unreachable (${reasons.join('; ')})`;
    if (required()) throw new Error(`${reason}, and HUB_TEST_POSTGRES=required`);
    console.warn(`[postgres] ${reason}: skipping the PostgreSQL suites of this file`);
    return { available: false, adminUrl: '', reason };
  })();
  return probed;
}

const redact = (url: string) => url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');

/** `url` with its database replaced. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function admin<T>(adminUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5_000 });
  client.on('error', () => {});
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}

export interface TestDatabase {
  name: string;
  url: string;
  /** Drops the database (closing whatever is still connected to it). */
  drop(): Promise<void>;
}

/**
 * A fresh empty database `hub_t_<random>` on the shared server. Call `drop()` after the file; it is
 * dropped when the file ends if not.
 */
export async function testDatabase(server: PostgresServer): Promise<TestDatabase> {
  if (!server.available) throw new Error(server.reason);
  const name = `hub_t_${crypto.randomBytes(6).toString('hex')}`;
  await admin(server.adminUrl, (c) => c.query(`create database ${name}`));
  const drop = () =>
    admin(server.adminUrl, (c) => c.query(`drop database if exists ${name} with (force)`)).then(() => {});
  afterFile(drop);
  return { name, url: withDatabase(server.adminUrl, name), drop };
}

/**
 * A plain pool for a test's own statements (int8 as numbers). Its connections ignore their errors: one
 * ended by `drop()` or killed on purpose must not become an unhandled error of the test run.
 */
export function testPool(url: string, max = 3): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, types: numberTypes });
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/** A plain client, its errors ignored as testPool's. Connect it yourself. */
export function testClient(url: string): pg.Client {
  const client = new pg.Client({ connectionString: url, types: numberTypes });
  client.on('error', () => {});
  return client;
}

/**
 * The hub's PostgreSQL store on `url` as the tests open it (HUB_SYNC=full, 5 s lock wait, 100 messages
 * kept for an hour, 100 subscriptions per credential, silent), with `overrides`.
 */
export function openTestHubStore(
  url: string,
  overrides: Partial<PostgresHubStoreOptions> = {},
): Promise<PostgresHubStore> {
  return openPostgresHubStore({
    url,
    sync: 'full',
    lockWaitMs: 5_000,
    messageRetention: { count: 100, ms: 3_600_000 },
    maxSubscriptionsPerCredential: 100,
    log: { warn: () => {} },
    ...overrides,
  });
}

/** A fresh database migrated to the hub's schema, a hub pool of role `writer` on it and a testPool. */
export interface MigratedDatabase {
  database: TestDatabase;
  pool: pg.Pool;
  admin: pg.Pool;
  log: PostgresLog;
  /** Ends both pools and drops the database. */
  drop(): Promise<void>;
}

export async function migratedDatabase(server: PostgresServer): Promise<MigratedDatabase> {
  const log: PostgresLog = { warn: () => {} };
  const database = await testDatabase(server);
  const { db } = openPostgres({ url: database.url, role: 'migrate', sync: 'full', lockWaitMs: 10_000, log });
  await migratePostgres(db).finally(() => db.destroy());
  const pool = createPool({ url: database.url, role: 'writer', sync: 'full', lockWaitMs: 10_000, log });
  const admin = testPool(database.url);
  return {
    database,
    pool,
    admin,
    log,
    drop: async () => {
      await pool.end();
      await admin.end();
      await database.drop();
    },
  };
}

// ---- throwaway clusters ----

const BIN = process.env.HUB_TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';
const isRoot = () => process.getuid?.() === 0;

/**
 * Whether this machine can start a throwaway cluster (the binaries exist). Without them the suites
 * that need one skip and say so, or fail with `HUB_TEST_POSTGRES=required`.
 */
export function throwawayClusterPossible(): boolean {
  if (fs.existsSync(path.join(BIN, 'initdb')) && fs.existsSync(path.join(BIN, 'pg_ctl'))) return true;
  const reason = `no PostgreSQL binaries in ${BIN} (HUB_TEST_PG_BIN)`;
  if (required()) throw new Error(`${reason}, and HUB_TEST_POSTGRES=required`);
  console.warn(`[postgres] ${reason}: skipping the suites of this file that restart PostgreSQL`);
  return false;
}

/** A binary of PostgreSQL run as the postgres user (through runuser when we are root). */
async function asPostgres(binary: string, args: string[]): Promise<string> {
  const [file, argv] = isRoot()
    ? ['runuser', ['-u', 'postgres', '--', path.join(BIN, binary), ...args]]
    : [path.join(BIN, binary), args];
  const { stdout } = await run(file, argv, { maxBuffer: 4 * 1024 * 1024 });
  return stdout;
}

export interface ThrowawayCluster {
  port: number;
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  dir: string;
  /** `pg_ctl stop` with the given mode (immediate = a crash: no checkpoint, recovery at the next start). */
  stop(mode?: 'smart' | 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  restart(mode?: 'smart' | 'fast' | 'immediate'): Promise<void>;
  /** Stops it (immediate) and removes its directory; done when the test file ends if the test did not. */
  destroy(): Promise<void>;
}

/**
 * A PostgreSQL 15 cluster of its own in a temp directory, on a free port of 127.0.0.1, trust
 * authentication, user postgres. Start-up takes a few seconds (initdb).
 */
export async function throwawayCluster(): Promise<ThrowawayCluster> {
  const dir = tempDir('hub-pg-');
  if (isRoot()) await run('chown', ['postgres:postgres', dir]);
  const data = path.join(dir, 'data');
  await asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
  let port = await stablePort();
  const pgCtl = (args: string[]) => asPostgres('pg_ctl', ['-D', data, ...args]);
  const start = async () => {
    await pgCtl([
      '-w',
      '-t',
      '60',
      '-l',
      path.join(dir, 'log'),
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200`,
      'start',
    ]);
  };
  const stop = async (mode: 'smart' | 'fast' | 'immediate' = 'fast') => {
    await pgCtl(['-w', '-t', '60', '-m', mode, 'stop']);
  };
  try {
    await start();
  } catch {
    port = await stablePort(); // taken meanwhile: one more try
    await start();
  }
  const destroy = async () => {
    await stop('immediate').catch(() => {});
    fs.rmSync(dir, { recursive: true, force: true });
  };
  afterFile(destroy);
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dir,
    start,
    stop,
    restart: async (mode = 'fast') => {
      await stop(mode);
      await start();
    },
    destroy,
  };
}

/** A row for the message log (logs.ts appendMessages) carrying `data`: the rest is fixed. */
export const messageRow = (data: string): NewMessage => ({
  sender_connection_id: 'c1',
  sender_type: 0,
  sender_friendly_name: 'Consumer/App',
  scope: 1,
  args: '["All"]',
  saga_id: null,
  key: 'K',
  data,
  sent_ms: 1,
});

/** A row for the StateObject log (logs.ts upsertStateObjects), S/P/`name` of `value`: the rest is fixed. */
export const stateObjectRow = (name: string, value = '1'): NewStateObject => ({
  sentinel_name: 'S',
  package_name: 'P',
  name,
  type: 'System.Int32',
  value,
  metadatas: '{}',
  last_update_ms: 1,
  lifetime_s: 0,
  expires_at_ms: null,
});

/** Waits (by polling pg_stat_activity, not by time) until the backend `pid` waits on a lock. */
export const waitUntilBlocked = (admin: pg.Pool, pid: number) =>
  until(
    async () =>
      (await admin.query('select wait_event_type from pg_stat_activity where pid = $1', [pid])).rows[0]
        ?.wait_event_type === 'Lock',
  );

/** The connections of the database at `url` waiting for a lock. */
export async function blockedConnections(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      `select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
    );
    return Number(rows[0].n);
  } finally {
    await client.end();
  }
}
