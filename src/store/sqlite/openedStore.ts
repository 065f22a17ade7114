/** The SQLite engine as the hub opens it: hub.db in the data directory, for this process alone. */
import path from 'node:path';
import type { OpenedStore } from '../../hub/ports/hubStore.js';
import type { StoreDependencies, StoreSettings } from '../settings.js';
import { committedInto } from '../settings.js';
import type { SqliteHubStore } from './hubStore.js';
import { openSqliteHubStore } from './hubStore.js';

export async function openSqliteStore(
  settings: StoreSettings,
  { logger, metrics }: StoreDependencies,
): Promise<OpenedStore & { store: SqliteHubStore }> {
  const store = await openSqliteHubStore({
    file: path.join(settings.dataDir, 'hub.db'),
    sync: settings.sync,
    lockWaitMs: settings.lockWaitMs,
    messageRetention: { count: settings.messageQueueLimit, ms: settings.messageRetentionMs },
    maxSubscriptionsPerCredential: settings.maxSubscriptionsPerCredential,
    vacuumIntervalMs: settings.vacuumIntervalMs,
    logger,
    committed: committedInto(metrics),
  });
  return {
    store,
    settling: {
      kind: 'byNextPoll',
      consumeWritten: (life, unsettled) => store.subscriptions.consumeWritten(life, unsettled),
    },
    sharedConfiguration: undefined,
    otherProcesses: undefined,
    close: () => store.close(),
  };
}
