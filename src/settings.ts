import path from 'node:path';
import { z } from 'zod';

/** Runtime options of one hub process, read from the environment (documented in README.md). */
export interface HubOptions {
  dataDir: string;
  configPath: string;
  /** Overrides the port of the configuration's listen URI; 0 picks a free port (tests). */
  port?: number;
  /** Overrides the host of the configuration's listen URI. */
  host?: string;
  sync: 'normal' | 'full';
  authFailureDelayMs: number;
  logLevel: string;
  adminKey?: string;
  bodyLimitBytes: number;
  /** Time a request body may take to arrive in full (408 after it). */
  bodyTimeoutMs: number;
  subscriptionIdleMs: number;
  /** Messages the log keeps at most; a subscription that falls behind misses the oldest (counted). */
  messageQueueLimit: number;
  /** Age past which a message leaves the log, and a purge's tombstone goes, read or not. */
  messageRetentionMs: number;
  /** Subscriptions one credential may hold at once; past it, 429. */
  maxSubscriptionsPerCredential: number;
  sweepIntervalMs: number;
  /** Package log entries kept (WriteLog); older ones are trimmed. */
  logRetention: number;
  /** Long-polls one credential may have waiting at once; past it, 429. */
  maxPollsPerCredential: number;
  /** Each further failed authentication from one address within a minute waits this much longer. */
  authFailureStepMs: number;
  /** Ceiling of the per-address authentication failure delay (device libraries wait 5 s at most). */
  authFailureMaxDelayMs: number;
  /** Failures from one address within a minute after which it gets 429 at once until a minute passes. */
  authFailureLimit: number;
  /** `GET /metrics` without a management credential. */
  metricsOpen: boolean;
  /** Largest package archive accepted by upload or download. */
  maxPackageBytes: number;
  /** Largest total a package archive may unpack to (zip bombs). */
  maxPackageUnpackedBytes: number;
  downloadTimeoutMs: number;
  /** Behind a reverse proxy: take the client address from X-Forwarded-For (auth failure slowdown). */
  trustProxy: boolean;
  /** Every this often, free database pages are given back to the file system (incremental vacuum). */
  vacuumIntervalMs: number;
  /** How long writes wait, without blocking the hub, while another process holds the database's write lock. */
  lockWaitMs: number;
  /** PEM certificate chain and private key files for `https://` listen URIs (HUB_TLS_CERT, HUB_TLS_KEY). */
  tlsCertPath?: string;
  tlsKeyPath?: string;
  /** HUB_DATABASE_URL: postgres://… runs the store on PostgreSQL; unset, SQLite in the data directory. */
  databaseUrl?: string;
  /** PostgreSQL: how often the tail reader reads the logs without a notification (HUB_PG_POLL_MS). */
  pgPollMs: number;
  /** PostgreSQL: connections of each process's `store` pool, its reads and takes (HUB_PG_POOL_MAX). */
  pgPoolMax: number;
  /** How often a process rewrites its row of the process list (HUB_PROCESS_HEARTBEAT_MS). */
  processHeartbeatMs: number;
  /** A process silent this long leaves the process list (HUB_PROCESS_FORGET_MS): a killed one. */
  processForgetMs: number;
  /** SignalR connections one credential may hold at once in a process; past it, negotiate answers 429. */
  signalrMaxConnectionsPerCredential: number;
  /** A SignalR WebSocket or SSE stream whose unsent data passes this is closed (a reader too slow). */
  signalrSendBufferBytes: number;
  /** SignalR's ConnectionTimeout, DisconnectTimeout and keep-alive, in seconds (ASP.NET's 110, 30, 10). */
  signalrTimings?: { connectionTimeoutS: number; disconnectTimeoutS: number; keepAliveS: number };
}

const integer = (min: number) => z.coerce.number().int().min(min);

const envSchema = z.object({
  HUB_DATA_DIR: z.string().min(1).default('./data'),
  HUB_DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'a postgres:// URL')
    .optional(),
  HUB_CONFIG: z.string().min(1).optional(),
  HUB_PORT: integer(0).max(65535).optional(),
  HUB_HOST: z.string().min(1).optional(),
  HUB_SYNC: z.enum(['normal', 'full']).default('normal'),
  HUB_AUTH_FAILURE_DELAY_MS: integer(0).default(1000),
  HUB_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  HUB_ADMIN_KEY: z.string().min(1).optional(),
  HUB_BODY_LIMIT_BYTES: integer(1024).default(1024 * 1024),
  HUB_BODY_TIMEOUT_MS: integer(100).default(15_000),
  HUB_SUBSCRIPTION_IDLE_SECONDS: integer(1).default(300),
  HUB_MESSAGE_QUEUE_LIMIT: integer(1).default(100_000),
  HUB_MESSAGE_RETENTION_SECONDS: integer(1).default(86_400),
  HUB_MAX_SUBSCRIPTIONS_PER_CREDENTIAL: integer(1).default(1000),
  HUB_LOG_RETENTION: integer(1).default(100_000),
  HUB_MAX_POLLS_PER_CREDENTIAL: integer(1).default(2000),
  HUB_AUTH_FAILURE_STEP_MS: integer(0).default(1000),
  HUB_AUTH_FAILURE_MAX_DELAY_MS: integer(0).default(3000),
  HUB_AUTH_FAILURE_LIMIT: integer(1).default(10),
  HUB_METRICS_OPEN: z.enum(['true', 'false']).default('false'),
  HUB_PACKAGE_MAX_BYTES: integer(1024).default(50 * 1024 * 1024),
  HUB_PACKAGE_MAX_UNPACKED_BYTES: integer(1024).default(200 * 1024 * 1024),
  HUB_DOWNLOAD_TIMEOUT_MS: integer(100).default(30_000),
  HUB_TRUST_PROXY: z.enum(['true', 'false']).default('false'),
  HUB_LOCK_WAIT_MS: integer(0).default(10_000),
  HUB_TLS_CERT: z.string().min(1).optional(),
  HUB_TLS_KEY: z.string().min(1).optional(),
  HUB_VACUUM_INTERVAL_MS: integer(1000).default(60_000),
  HUB_PG_POLL_MS: integer(10).max(60_000).default(1000),
  HUB_PG_POOL_MAX: integer(1).max(100).default(8),
  // At most 5 s: a process starting beside a running one tells it by a heartbeat younger than 15 s.
  HUB_PROCESS_HEARTBEAT_MS: integer(100).max(5000).default(5000),
  HUB_PROCESS_FORGET_MS: integer(1000).default(60_000),
  HUB_SIGNALR_MAX_CONNECTIONS_PER_CREDENTIAL: integer(1).default(200),
  HUB_SIGNALR_SEND_BUFFER_BYTES: integer(65_536).default(4 * 1024 * 1024),
});

/** Defaults for every option; `overrides` wins. Tests use this with a temp data dir. */
export function hubOptions(overrides: Partial<HubOptions> & { dataDir: string }): HubOptions {
  const idleMs = overrides.subscriptionIdleMs ?? 300_000;
  return {
    configPath: path.join(overrides.dataDir, 'hub.config.xml'),
    sync: 'normal',
    authFailureDelayMs: 1000,
    logLevel: 'info',
    bodyLimitBytes: 1024 * 1024,
    bodyTimeoutMs: 15_000,
    subscriptionIdleMs: idleMs,
    messageQueueLimit: 100_000,
    messageRetentionMs: 86_400_000,
    maxSubscriptionsPerCredential: 1000,
    sweepIntervalMs: Math.min(30_000, Math.max(100, Math.floor(idleMs / 10))),
    logRetention: 100_000,
    maxPollsPerCredential: 2000,
    authFailureStepMs: 1000,
    authFailureMaxDelayMs: 3000,
    authFailureLimit: 10,
    metricsOpen: false,
    maxPackageBytes: 50 * 1024 * 1024,
    maxPackageUnpackedBytes: 200 * 1024 * 1024,
    downloadTimeoutMs: 30_000,
    trustProxy: false,
    lockWaitMs: 10_000,
    vacuumIntervalMs: 60_000,
    pgPollMs: 1000,
    pgPoolMax: 8,
    processHeartbeatMs: 5000,
    processForgetMs: 60_000,
    signalrMaxConnectionsPerCredential: 200,
    signalrSendBufferBytes: 4 * 1024 * 1024,
    ...overrides,
  };
}

/** Reads HUB_* variables; a bad value stops the start with the variable's name. */
export function optionsFromEnvironment(env: NodeJS.ProcessEnv): HubOptions {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`Invalid environment variable ${String(issue.path[0])}: ${issue.message}`);
  }
  const e = parsed.data;
  const dataDir = path.resolve(e.HUB_DATA_DIR);
  return hubOptions({
    dataDir,
    configPath: path.resolve(e.HUB_CONFIG ?? path.join(dataDir, 'hub.config.xml')),
    port: e.HUB_PORT,
    host: e.HUB_HOST,
    sync: e.HUB_SYNC,
    authFailureDelayMs: e.HUB_AUTH_FAILURE_DELAY_MS,
    logLevel: e.HUB_LOG_LEVEL,
    adminKey: e.HUB_ADMIN_KEY,
    bodyLimitBytes: e.HUB_BODY_LIMIT_BYTES,
    bodyTimeoutMs: e.HUB_BODY_TIMEOUT_MS,
    subscriptionIdleMs: e.HUB_SUBSCRIPTION_IDLE_SECONDS * 1000,
    messageQueueLimit: e.HUB_MESSAGE_QUEUE_LIMIT,
    messageRetentionMs: e.HUB_MESSAGE_RETENTION_SECONDS * 1000,
    maxSubscriptionsPerCredential: e.HUB_MAX_SUBSCRIPTIONS_PER_CREDENTIAL,
    logRetention: e.HUB_LOG_RETENTION,
    maxPollsPerCredential: e.HUB_MAX_POLLS_PER_CREDENTIAL,
    authFailureStepMs: e.HUB_AUTH_FAILURE_STEP_MS,
    authFailureMaxDelayMs: e.HUB_AUTH_FAILURE_MAX_DELAY_MS,
    authFailureLimit: e.HUB_AUTH_FAILURE_LIMIT,
    metricsOpen: e.HUB_METRICS_OPEN === 'true',
    maxPackageBytes: e.HUB_PACKAGE_MAX_BYTES,
    maxPackageUnpackedBytes: e.HUB_PACKAGE_MAX_UNPACKED_BYTES,
    downloadTimeoutMs: e.HUB_DOWNLOAD_TIMEOUT_MS,
    trustProxy: e.HUB_TRUST_PROXY === 'true',
    lockWaitMs: e.HUB_LOCK_WAIT_MS,
    tlsCertPath: e.HUB_TLS_CERT === undefined ? undefined : path.resolve(e.HUB_TLS_CERT),
    tlsKeyPath: e.HUB_TLS_KEY === undefined ? undefined : path.resolve(e.HUB_TLS_KEY),
    vacuumIntervalMs: e.HUB_VACUUM_INTERVAL_MS,
    databaseUrl: e.HUB_DATABASE_URL,
    pgPollMs: e.HUB_PG_POLL_MS,
    pgPoolMax: e.HUB_PG_POOL_MAX,
    processHeartbeatMs: e.HUB_PROCESS_HEARTBEAT_MS,
    processForgetMs: e.HUB_PROCESS_FORGET_MS,
    signalrMaxConnectionsPerCredential: e.HUB_SIGNALR_MAX_CONNECTIONS_PER_CREDENTIAL,
    signalrSendBufferBytes: e.HUB_SIGNALR_SEND_BUFFER_BYTES,
  });
}
