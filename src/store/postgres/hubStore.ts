/**
 * The PostgreSQL engine (issue 22): migrates the database (safe with several processes starting at
 * once), then builds one implementation of each port of src/hub/ports over two pools: `hub:<pid>:write`
 * (WRITE_CONNECTIONS) for the group commits (pushes, sends, WriteLog, settled deliveries), their
 * doorbells and the readiness probe, and `hub:<pid>:store` (HUB_PG_POOL_MAX) for everything else, the
 * polls' takes above all. A write is acknowledged after a round trip on a connection of its own kind,
 * never behind a herd of polls re-sent at once (after PostgreSQL restarts, hundreds per process). Every write that changes a log rings the doorbell after its COMMIT (NOTIFY
 * `hub`, listener.ts; its payload the time it was sent, this process's token and the log: ownCommits.ts),
 * for the other processes' tail readers.
 */
import type { HubStore, StoreCounts } from '../../hub/ports/hubStore.js';
import { PostgresActivityStore } from './ports/activity.js';
import { PostgresAuthFailureStore } from './ports/authFailures.js';
import { PostgresCallerStore } from './ports/callers.js';
import { PostgresConfigurationDocumentStore, PostgresConfigurationStore } from './ports/configuration.js';
import { PostgresDescriptorStore } from './ports/descriptors.js';
import { PostgresHubSettingStore } from './ports/hubSettings.js';
import { notifyCommitted } from './feed/listener.js';
import type { MessageRetention } from './ports/messages.js';
import { countQueuedMessages, PostgresMessageStore } from './ports/messages.js';
import type { LogName } from './connections/logs.js';
import { migratePostgres } from './connections/migrate.js';
import { OwnCommits } from './feed/ownCommits.js';
import { PostgresPackageLogStore } from './ports/packageLogs.js';
import { PostgresPendingDeliveries } from './ports/pendingDeliveries.js';
import { ping, PostgresProcessRegistryStore } from './ports/processes.js';
import type { PostgresLog } from './connections/pool.js';
import { createPool, openPostgres } from './connections/pool.js';
import { PostgresRepositoryStore } from './ports/repository.js';
import { countStateObjects, PostgresStateObjectStore } from './ports/stateObjects.js';
import { countSubscriptions, PostgresSubscriptionStore } from './ports/subscriptions.js';

export interface PostgresHubStoreOptions {
  /** HUB_DATABASE_URL. */
  url: string;
  sync: 'normal' | 'full';
  lockWaitMs: number;
  messageRetention: MessageRetention;
  maxSubscriptionsPerCredential: number;
  /** Connections of the pool (HUB_PG_POOL_MAX); default 8. */
  poolMax?: number;
  log: PostgresLog;
  /** Each group commit's COMMIT duration in ms and how many items it carried (metrics). */
  committed?: (commitMs: number, items?: number) => void;
  /** Where the group commits record what this process committed (its tail reader skips it; ownCommits.ts). */
  own?: OwnCommits;
}

/**
 * The write pool's connections: the four group commits' batches (one at a time each), their doorbells
 * sharing what is free, and the readiness probe.
 */
const WRITE_CONNECTIONS = 4;

/** The ports, and what only a store several processes share has: openedStore.ts makes capabilities of them. */
export interface PostgresHubStore extends HubStore {
  readonly configurationDocument: PostgresConfigurationDocumentStore;
  readonly authFailures: PostgresAuthFailureStore;
  readonly subscriptions: PostgresSubscriptionStore;
}

export async function openPostgresHubStore(options: PostgresHubStoreOptions): Promise<PostgresHubStore> {
  const { log } = options;
  const { db } = openPostgres({
    url: options.url,
    role: 'migrate',
    sync: options.sync,
    lockWaitMs: options.lockWaitMs,
    log,
    max: 1,
  });
  await migratePostgres(db).finally(() => db.destroy());
  const connection = { url: options.url, sync: options.sync, lockWaitMs: options.lockWaitMs, log };
  const pool = createPool({ ...connection, role: 'store', max: options.poolMax });
  const writes = createPool({ ...connection, role: 'write', max: WRITE_CONNECTIONS });
  // The payload is the sending time (epoch ms), for the listeners' lag metrics, this process's token and the log.
  const own = options.own ?? new OwnCommits();
  const announce = (to: LogName) => (client: Parameters<typeof notifyCommitted>[0]) =>
    notifyCommitted(client, own.payload(to));
  return {
    stateObjects: new PostgresStateObjectStore({
      pool,
      writes,
      log,
      announce: announce('state_objects'),
      committed: options.committed,
      own,
    }),
    messages: new PostgresMessageStore({
      pool,
      writes,
      log,
      retention: options.messageRetention,
      announce: announce('messages'),
      committed: options.committed,
      own,
    }),
    subscriptions: new PostgresSubscriptionStore(
      pool,
      options.maxSubscriptionsPerCredential,
      new PostgresPendingDeliveries(pool, log, writes),
    ),
    packageLogs: new PostgresPackageLogStore(pool, log, announce('package_logs'), own, writes),
    callers: new PostgresCallerStore(pool),
    descriptors: new PostgresDescriptorStore(pool),
    activity: new PostgresActivityStore(pool),
    hubSettings: new PostgresHubSettingStore(pool),
    configuration: new PostgresConfigurationStore(pool),
    configurationDocument: new PostgresConfigurationDocumentStore(pool, log),
    repository: new PostgresRepositoryStore(pool),
    authFailures: new PostgresAuthFailureStore(pool),
    processes: new PostgresProcessRegistryStore(pool),
    counts: async (): Promise<StoreCounts> => ({
      subscriptions: await countSubscriptions(pool),
      queuedMessages: await countQueuedMessages(pool),
      stateObjects: await countStateObjects(pool),
    }),
    ping: (timeoutMs) => ping(writes, timeoutMs),
    close: () => Promise.all([pool.end(), writes.end()]).then(() => undefined),
  };
}
