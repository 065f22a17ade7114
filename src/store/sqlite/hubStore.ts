/**
 * The SQLite engine: opens hub.db (pragmas, migrations), builds one implementation of each port of
 * src/hub/ports over it, runs its own upkeep (incremental vacuum) and closes it with a WAL checkpoint.
 */
import path from 'node:path';
import type { Logger } from 'pino';
import { TransactionBatcher } from './database/batch.js';
import type { OpenedDatabase } from './database/open.js';
import { isSqliteBusy } from './database/busy.js';
import { closeDatabase, incrementalVacuum, migrateToLatest, openDatabase } from './database/open.js';
import type { HubStore, StoreCounts } from '../../hub/ports/hubStore.js';
import { SqliteActivityStore } from './activity.js';
import { SqliteCallerStore } from './callers.js';
import { SqliteConfigurationStore } from './configuration.js';
import { SqliteDescriptorStore } from './descriptors.js';
import { SqliteHubSettingStore } from './hubSettings.js';
import { countQueuedMessages, SqliteMessageStore } from './messages.js';
import { SqlitePackageLogStore } from './packageLogs.js';
import { SqlitePendingDeliveries } from './pendingDeliveries.js';
import { SqliteProcessRegistryStore } from './processes.js';
import { SqliteRepositoryStore } from './repository.js';
import { countStateObjects, SqliteStateObjectStore } from './stateObjects.js';
import { countSubscriptions, SqliteSubscriptionStore } from './subscriptions.js';

export interface SqliteHubStoreOptions {
  /** hub.db; the repository's archives are files in `repository/` beside it. */
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

export interface SqliteHubStore extends HubStore {
  /** The file itself, for the hub's own tests and tools (pragmas, a second look at the rows). */
  readonly database: OpenedDatabase;
  /** With `consumeWritten`, which ends this process's written answers at a graceful shutdown (DeliverySettling). */
  readonly subscriptions: SqliteSubscriptionStore;
}

export async function openSqliteHubStore(options: SqliteHubStoreOptions): Promise<SqliteHubStore> {
  const { logger, committed } = options;
  const database = openDatabase(options.file, options.sync, committed && ((ms) => committed(ms)), options.lockWaitMs);
  const { db, sqlite } = database;
  if (database.switchedToIncrementalVacuum)
    logger.info('database rebuilt once (VACUUM) to switch to incremental auto-vacuum');
  try {
    await migrateToLatest(db);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  const batcher = new TransactionBatcher(db, sqlite, { lockWaitMs: options.lockWaitMs, committed });
  const stateObjects = new SqliteStateObjectStore(db, sqlite, batcher);
  const pending = new SqlitePendingDeliveries(sqlite, batcher, stateObjects.memory);
  const messages = new SqliteMessageStore(sqlite, batcher, options.messageRetention);
  batcher.whenRolledBack(() => {
    stateObjects.memory.rolledBack();
    messages.memory.changed();
  });
  const vacuum = setInterval(() => {
    try {
      incrementalVacuum(sqlite);
    } catch (error) {
      if (isSqliteBusy(error)) logger.warn('incremental vacuum skipped: the database is locked by another process');
      else logger.error({ err: error }, 'incremental vacuum failed');
    }
  }, options.vacuumIntervalMs);
  vacuum.unref();
  return {
    database,
    stateObjects,
    messages,
    subscriptions: new SqliteSubscriptionStore(
      db,
      sqlite,
      batcher,
      stateObjects,
      messages,
      pending,
      options.maxSubscriptionsPerCredential,
    ),
    packageLogs: new SqlitePackageLogStore(db, sqlite, batcher),
    callers: new SqliteCallerStore(db),
    descriptors: new SqliteDescriptorStore(db),
    activity: new SqliteActivityStore(db),
    hubSettings: new SqliteHubSettingStore(db),
    configuration: new SqliteConfigurationStore(db),
    repository: new SqliteRepositoryStore(db, path.join(path.dirname(options.file), 'repository')),
    processes: new SqliteProcessRegistryStore(),
    counts: async (): Promise<StoreCounts> => ({
      subscriptions: await countSubscriptions(db),
      queuedMessages: await countQueuedMessages(db),
      stateObjects: await countStateObjects(db),
    }),
    ping: () => Promise.resolve(),
    close: async () => {
      clearInterval(vacuum);
      await closeDatabase(database);
    },
  };
}
