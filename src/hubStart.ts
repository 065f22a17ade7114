/**
 * What a hub's start reads and opens before createHub.ts composes its services: the store engine its
 * options choose, the configuration it starts with on PostgreSQL, the addresses it serves, and on
 * PostgreSQL the feed of other processes' commits.
 */
import path from 'node:path';
import type { Logger } from 'pino';
import { ConfigurationError } from './config/validate.js';
import type { OpenedDatabase } from './store/sqlite/database/open.js';
import type { SharedStartingConfiguration } from './hub/configuration/configurationSharedStart.js';
import { sharedStartingConfiguration } from './hub/configuration/configurationSharedStart.js';
import { checkServable } from './http/server.js';
import type { ListenAddress } from './listen.js';
import { listenAddresses } from './listen.js';
import type { HubStore } from './hub/ports/hubStore.js';
import type { HubMetrics } from './metrics.js';
import type { HubOptions } from './settings.js';
// Types only: each engine's modules load when it is the one chosen (a hub on SQLite never loads `pg`).
import type { Announcements, CrossProcessWakeUps } from './store/postgres/feed/crossProcess.js';
import type { OwnCommits } from './store/postgres/feed/ownCommits.js';

/**
 * The store engine `options` choose: PostgreSQL with HUB_DATABASE_URL (with `own`, what its writes
 * committed, for the cross-process feed), otherwise SQLite in the data directory.
 */
export async function openStore(
  options: HubOptions,
  logger: Logger,
  metrics: HubMetrics,
): Promise<HubStore & { database?: OpenedDatabase; own?: OwnCommits }> {
  const committed = (commitMs: number, pieces?: number) => {
    metrics.commitDuration.observe(commitMs / 1000);
    if (pieces !== undefined) metrics.batchSize.observe(pieces);
  };
  const common = {
    sync: options.sync,
    lockWaitMs: options.lockWaitMs,
    messageRetention: { count: options.messageQueueLimit, ms: options.messageRetentionMs },
    maxSubscriptionsPerCredential: options.maxSubscriptionsPerCredential,
    committed,
  };
  if (options.databaseUrl) {
    const [{ openPostgresHubStore }, { OwnCommits }] = await Promise.all([
      import('./store/postgres/hubStore.js'),
      import('./store/postgres/feed/ownCommits.js'),
    ]);
    // `own` records what this process commits, which its cross-process feed need not read back.
    const own = new OwnCommits();
    return { ...(await openPostgresHubStore({ ...common, url: options.databaseUrl, log: logger, own })), own };
  }
  // The SQLite engine (its store, statements and migrations) loads only when it is the one chosen.
  const { openSqliteHubStore } = await import('./store/sqlite/hubStore.js');
  return openSqliteHubStore({
    ...common,
    file: path.join(options.dataDir, 'hub.db'),
    vacuumIntervalMs: options.vacuumIntervalMs,
    logger,
  });
}

/** PostgreSQL: what other hub processes commit, announced to this one's `notifier` so it wakes its polls too. */
export async function crossProcessFeed(
  options: HubOptions,
  logger: Logger,
  notifier: Announcements,
  metrics: HubMetrics,
  /** What this process's stores committed (openStore's `own`): not read back. */
  own?: OwnCommits,
): Promise<CrossProcessWakeUps | undefined> {
  if (!options.databaseUrl) return undefined;
  const { registerCrossProcessMetrics, startCrossProcessWakeUps } =
    await import('./store/postgres/feed/crossProcess.js');
  const feed = await startCrossProcessWakeUps({
    url: options.databaseUrl,
    sync: options.sync,
    lockWaitMs: options.lockWaitMs,
    log: logger,
    announce: notifier,
    fallbackMs: options.pgPollMs,
    own,
    lags: {
      notification: (ms) => metrics.notificationLag.observe(Math.max(0, ms) / 1000),
      tailRead: (ms) => metrics.tailReadLag.observe(Math.max(0, ms) / 1000),
    },
  });
  registerCrossProcessMetrics(metrics.registry, feed);
  return feed;
}

/** The addresses this hub serves; throws ConfigurationError for a listen URI it cannot serve. */
export function listenPlan(options: HubOptions, listenUris: string[]): ListenAddress[] {
  let addresses: ListenAddress[];
  try {
    addresses = listenAddresses(listenUris, { host: options.host, port: options.port });
  } catch (error) {
    throw new ConfigurationError(`<listenUris>: ${(error as Error).message}`);
  }
  addresses.forEach((address) => checkServable(options, address));
  return addresses;
}

/** The configuration a PostgreSQL hub starts with: the database's, imported from the file by the first start. */
export async function sharedStart(
  options: HubOptions,
  logger: Logger,
  store: HubStore,
  keep: (generatedKey: string) => void,
): Promise<SharedStartingConfiguration> {
  if (!store.configurationDocument) throw new Error('this store keeps no configuration document');
  return sharedStartingConfiguration(store.configurationDocument, options.configPath, options.adminKey, logger, keep);
}

export function warnIgnored(logger: Logger, where: string, ignored: string[]): void {
  if (ignored.length) logger.warn({ ignored }, `${where}: not used by this hub (ignored): ${ignored.join('; ')}`);
}
