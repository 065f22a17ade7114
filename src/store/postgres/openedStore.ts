/**
 * The PostgreSQL engine as the hub opens it (HUB_DATABASE_URL): its store, and its cross-process feed
 * (feed/crossProcess.ts), started with it, through which what other hub processes on the database commit
 * wakes this one's polls, and their notices (polls, configuration, blocked addresses) reach it.
 */
import type { OpenedStore } from '../../hub/ports/hubStore.js';
import type { StoreDependencies, StoreSettings } from '../settings.js';
import { committedInto } from '../settings.js';
import { AUTH_FAILURE_CHANNEL, CONFIGURATION_CHANNEL } from './feed/channels.js';
import { registerCrossProcessMetrics, startCrossProcessWakeUps } from './feed/crossProcess.js';
import { OwnCommits } from './feed/ownCommits.js';
import { openPostgresHubStore } from './hubStore.js';

export async function openPostgresStore(
  settings: StoreSettings & { databaseUrl: string },
  { logger, metrics, announce }: StoreDependencies,
): Promise<OpenedStore> {
  const connection = { url: settings.databaseUrl, sync: settings.sync, lockWaitMs: settings.lockWaitMs, log: logger };
  // What this process's stores commit, which its feed need not read back.
  const own = new OwnCommits();
  const store = await openPostgresHubStore({
    ...connection,
    messageRetention: { count: settings.messageQueueLimit, ms: settings.messageRetentionMs },
    maxSubscriptionsPerCredential: settings.maxSubscriptionsPerCredential,
    poolMax: settings.pgPoolMax,
    committed: committedInto(metrics),
    own,
  });
  let feed;
  try {
    feed = await startCrossProcessWakeUps({
      ...connection,
      announce,
      fallbackMs: settings.pgPollMs,
      own,
      lags: {
        notification: (ms) => metrics.notificationLag.observe(Math.max(0, ms) / 1000),
        tailRead: (ms) => metrics.tailReadLag.observe(Math.max(0, ms) / 1000),
      },
    });
  } catch (error) {
    await store.close();
    throw error;
  }
  registerCrossProcessMetrics(metrics.registry, feed);
  const { listen } = feed;
  return {
    store,
    settling: { kind: 'byOwnWrite' },
    sharedConfiguration: {
      documents: store.configurationDocument,
      onChanged: (hear) => listen(CONFIGURATION_CHANNEL, () => hear()),
    },
    otherProcesses: {
      polls: feed.polls,
      authFailures: store.authFailures,
      onAddressBlocked: (hear) => listen(AUTH_FAILURE_CHANNEL, hear),
      keepActive: (ids, now) => store.subscriptions.keepActive(ids, now),
    },
    close: async () => {
      await feed.stop();
      await store.close();
    },
  };
}
