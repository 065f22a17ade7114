/**
 * The SQLite engine: opens hub.db (pragmas, migrations), builds the one implementation of each
 * interface of engine.ts over it, runs its own upkeep (incremental vacuum) and closes it with a WAL
 * checkpoint. Everything SQLite-specific the hub needs at start and stop is here.
 */
import type { Logger } from 'pino';
import type { OpenedDatabase } from '../db/open.js';
import { closeDatabase, incrementalVacuum, isDatabaseBusy, migrateToLatest, openDatabase } from '../db/open.js';
import { TransactionBatcher } from '../db/batch.js';
import { CallerStore } from './callers.js';
import { ConfigurationStore } from './configuration.js';
import { DescriptorStore } from './descriptors.js';
import type { HubStore, StoreCounts } from './engine.js';
import { HousekeepingStore } from './housekeeping.js';
import { HubSettingsStore } from './hubSettings.js';
import { MessageStore } from './messageStore.js';
import { countQueuedMessages } from './messages.js';
import { ActivityStore } from './overview.js';
import { PackageLogStore } from './packageLogs.js';
import { RepositoryStore } from './repository.js';
import { StateObjectStore } from './stateObjectStore.js';
import { countStateObjects, StateObjectReadStore } from './stateObjects.js';
import { SubscriptionStore } from './subscriptionStore.js';
import { countSubscriptions } from './subscriptions.js';

export interface SqliteStoreOptions {
  file: string;
  sync: 'normal' | 'full';
  /** How long a write waits for another process's write lock before it fails with 503. */
  lockWaitMs: number;
  messageRetention: { count: number; ms: number };
  maxSubscriptionsPerCredential: number;
  vacuumIntervalMs: number;
  logger: Logger;
  /** Every COMMIT's duration in ms, and for a group commit how many pieces it held (metrics). */
  committed?: (ms: number, pieces?: number) => void;
}

export interface SqliteStore extends HubStore {
  /** The file itself, for the hub's own tests and tools (pragmas, a second look at the rows). */
  readonly database: OpenedDatabase;
}

export async function openSqliteStore(options: SqliteStoreOptions): Promise<SqliteStore> {
  const { logger, committed } = options;
  const database = openDatabase(options.file, options.sync, committed && ((ms) => committed(ms)), options.lockWaitMs);
  const { db, sqlite } = database;
  if (database.switchedToIncrementalVacuum) logger.info('database rebuilt once (VACUUM) to switch to incremental auto-vacuum');
  try {
    await migrateToLatest(db);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  const batcher = new TransactionBatcher(db, sqlite, { lockWaitMs: options.lockWaitMs, committed });
  const stateObjects = new StateObjectStore(db, sqlite, batcher);
  const messages = new MessageStore(sqlite, batcher, options.messageRetention);
  const vacuum = setInterval(() => {
    try {
      incrementalVacuum(sqlite);
    } catch (error) {
      if (isDatabaseBusy(error)) logger.warn('incremental vacuum skipped: the database is locked by another process');
      else logger.error({ err: error }, 'incremental vacuum failed');
    }
  }, options.vacuumIntervalMs);
  vacuum.unref();
  return {
    database,
    stateObjects,
    stateObjectReads: new StateObjectReadStore(db),
    messages,
    subscriptions: new SubscriptionStore(sqlite, batcher, stateObjects, messages, options.maxSubscriptionsPerCredential),
    packageLogs: new PackageLogStore(db, sqlite, batcher),
    callers: new CallerStore(db),
    descriptors: new DescriptorStore(db),
    activity: new ActivityStore(db),
    settings: new HubSettingsStore(db),
    housekeeping: new HousekeepingStore(db),
    configuration: new ConfigurationStore(db),
    repository: new RepositoryStore(db),
    counts: async (): Promise<StoreCounts> => ({
      subscriptions: await countSubscriptions(db),
      queuedMessages: await countQueuedMessages(db),
      stateObjects: await countStateObjects(db),
    }),
    close: async () => {
      clearInterval(vacuum);
      await closeDatabase(database);
    },
  };
}
