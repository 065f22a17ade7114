/**
 * The composition root: builds the database, the domain services, the notifier, the timers and the
 * HTTP server once, and owns their start and stop. The CLI and the tests both build hubs through it.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { StartingConfiguration } from './config/configFile.js';
import { startingConfiguration } from './config/configFile.js';
import type { OpenedDatabase } from './db/open.js';
import { lockDataDirectory } from './db/dataDirectory.js';
import { CallerDirectory } from './hub/caller.js';
import type { Configuration } from './hub/configuration.js';
import { FileConfiguration } from './hub/configurationOnFile.js';
import { SharedConfiguration } from './hub/configurationShared.js';
import type { SharedStartingConfiguration } from './hub/configurationSharedStart.js';
import { Deliveries } from './hub/deliveries.js';
import { Descriptors } from './hub/descriptors.js';
import { ExpiryTimer } from './hub/expiry.js';
import { ConfigurationFileActions } from './hub/configurationFileActions.js';
import { Credentials } from './hub/credentials.js';
import { HubLicense } from './hub/license.js';
import { PackageInstances } from './hub/packageInstances.js';
import { Sentinels } from './hub/sentinels.js';
import { Messages } from './hub/messages.js';
import { Notifier } from './hub/notifier.js';
import { PackageLogs } from './hub/packageLogs.js';
import { StateObjects } from './hub/stateObjects.js';
import { Subscriptions } from './hub/subscriptions.js';
import { Sweeper } from './hub/sweeper.js';
import { createApp } from './http/app.js';
import type { HttpServers } from './http/server.js';
import { checkServable, serveHttp } from './http/server.js';
import type { HubServices } from './http/context.js';
import { createLogger } from './logger.js';
import type { HubOptions } from './settings.js';
import { HubMetrics } from './metrics.js';
import { PollGate } from './hub/pollGate.js';
import { AuthFailureThrottle } from './hub/authFailureThrottle.js';
import { Repository } from './hub/repository.js';
import { Overview } from './hub/overview.js';
import { ProcessRegistry } from './hub/processRegistry.js';
import { Readiness } from './hub/readiness.js';
import type { HubStore } from './hub/ports/hubStore.js';
import type { PollsElsewhere } from './hub/ports/pollsElsewhere.js';
import { listenPlan, openStore, sharedStart, warnIgnored } from './hubStart.js';
import { registerCrossProcessMetrics, startCrossProcessWakeUps } from './store/postgres/crossProcess.js';
import { CONFIGURATION_CHANNEL } from './store/postgres/configuration.js';
import { AUTH_FAILURE_CHANNEL } from './store/postgres/authFailures.js';
import { HUB_VERSION } from './version.js';

export interface Hub {
  /** `http://HOST:PORT` (plus the first listen URI's path prefix) once started. */
  readonly url: string;
  readonly port: number;
  /** Every address served, one per listen URI (several when the configuration lists several). */
  readonly urls: string[];
  readonly services: HubServices;
  /** The SQLite file (unset on PostgreSQL). */
  readonly database: OpenedDatabase | undefined;
  /** Set when the first start generated the administrator's access key. */
  readonly generatedAdminKey: string | undefined;
  /**
   * Applies the configuration file as it is on disk now, or on PostgreSQL the database's document (what
   * `GET management/configuration/reload` does, for SIGHUP). Answers false when it was the text already
   * applied (nothing changed). Throws ConfigurationError, changing nothing, when it would not start.
   */
  reloadConfiguration(): Promise<boolean>;
  stop(): Promise<void>;
}

/**
 * Starts a hub on `options.dataDir`, which it holds alone until stopped: a second hub on the same
 * directory fails here with DataDirectoryInUse naming the first one's pid (db/dataDirectory.ts).
 */
export async function startHub(options: HubOptions, logger: Logger = createLogger(options.logLevel)): Promise<Hub> {
  const dataDirLock = lockDataDirectory(options.dataDir);
  try {
    const hub = await startLockedHub(options, logger);
    const stopHub = hub.stop;
    return Object.assign(hub, {
      stop: async () => {
        await stopHub();
        dataDirLock.release();
      },
    });
  } catch (error) {
    dataDirLock.release();
    throw error;
  }
}

/** The domain services over `store`, and the timers they need (not started yet). */
async function createServices(
  options: HubOptions,
  logger: Logger,
  loaded: StartingConfiguration | SharedStartingConfiguration,
  store: HubStore,
  notifier: Notifier,
  metrics: HubMetrics,
  elsewhere: PollsElsewhere | undefined,
) {
  const { file, text: configText, generatedAdminKey } = loaded;
  const configuration: Configuration =
    'document' in loaded && store.configurationDocument
      ? new SharedConfiguration(store.configurationDocument, file.config, loaded.document, logger)
      : new FileConfiguration(store.configuration, options.configPath, file.config, configText);
  await configuration.recordStart({
    by: generatedAdminKey === undefined ? '(file)' : '(first start)',
    reason: 'start',
  });

  const gate = new PollGate(options.maxPollsPerCredential);
  const callers = new CallerDirectory(store.callers);
  const deliveries = new Deliveries(store.subscriptions, options.databaseUrl === undefined, (error) =>
    logger.warn({ err: error }, 'settling a delivery failed: it is read again, or read on, later'),
  );
  const subscriptions = new Subscriptions(store.subscriptions, callers, notifier, gate, deliveries, elsewhere);
  const expiry = new ExpiryTimer(store.stateObjects, notifier, (error) =>
    logger.error({ err: error }, 'expiry failed'),
  );
  const counters = { missedMessages: 0 };
  const messages = new Messages(store.messages, store.subscriptions, notifier, subscriptions, callers, {
    missed: (subscription, caller, n) => {
      counters.missedMessages += n;
      metrics.droppedMessages.inc(n);
      logger.warn(
        {
          subscription,
          caller: caller.friendlyName,
          credential: caller.credential.name,
          missed: n,
          total: counters.missedMessages,
        },
        'message subscription fell behind the log retention: the oldest messages it had not read are gone',
      );
    },
  });
  const packageLogs = new PackageLogs(store.packageLogs, notifier, logger, options.logRetention);
  const repository = new Repository(
    store.repository,
    path.join(options.dataDir, 'tmp'),
    {
      maxEntries: 1000,
      maxUncompressedBytes: options.maxPackageUnpackedBytes,
      maxPackageBytes: options.maxPackageBytes,
      downloadTimeoutMs: options.downloadTimeoutMs,
      maxRedirects: 5,
    },
    logger,
  );
  await repository.start();
  const descriptors = new Descriptors(store.descriptors);
  const license = new HubLicense(store.hubSettings);
  const sentinels = new Sentinels(configuration, license);
  const services: HubServices = {
    options,
    logger,
    configuration,
    stateObjects: new StateObjects(store.stateObjects, store.subscriptions, notifier, subscriptions, expiry),
    messages,
    packageLogs,
    descriptors,
    management: {
      configurationFile: new ConfigurationFileActions(configuration, messages, (address) =>
        checkServable(options, address),
      ),
      sentinels,
      instances: new PackageInstances(configuration, sentinels, license, repository),
      credentials: new Credentials(configuration),
      license,
    },
    repository,
    version: HUB_VERSION,
    metrics,
    authFailures: new AuthFailureThrottle(
      {
        // Constellation's appSettings DelayAfterAuthentificationError, when the file has it, sets the base delay.
        baseMs: file.appSettings.delayAfterAuthenticationErrorMs ?? options.authFailureDelayMs,
        stepMs: options.authFailureStepMs,
        maxMs: options.authFailureMaxDelayMs,
        limit: options.authFailureLimit,
      },
      store.authFailures,
      (error) => logger.warn({ err: error }, 'failed authentication not counted in the database'),
    ),
    overview: new Overview(store.activity, descriptors, configuration),
    processes: new ProcessRegistry(store.processes, () => notifier.waitingCount, HUB_VERSION, logger),
  };
  const sweeper = new Sweeper(
    store.subscriptions,
    store.stateObjects,
    store.messages,
    notifier,
    packageLogs,
    logger,
    options.subscriptionIdleMs,
    options.sweepIntervalMs,
    options.messageRetentionMs,
  );
  return { services, expiry, sweeper, processes: services.processes };
}

/** How often a PostgreSQL hub re-reads the configuration document without a notification. */
const CONFIGURATION_FALLBACK_MS = 5_000;

async function startLockedHub(options: HubOptions, logger: Logger): Promise<Hub> {
  // SQLite: the file is the configuration, checked before any database work. PostgreSQL: the
  // database's document (configurationSharedStart.ts), read once the store is open.
  const fileStart = options.databaseUrl ? undefined : await startingConfiguration(options.configPath, options.adminKey);
  if (fileStart) warnIgnored(logger, `configuration file ${options.configPath}`, fileStart.file.ignored);
  const fileAddresses = fileStart && listenPlan(options, fileStart.file.config.listenUris);
  fs.mkdirSync(options.dataDir, { recursive: true });
  const notifier = new Notifier();
  // The counts are read at scrape time only, long after `store` below exists.
  const metrics = new HubMetrics({
    waitingPolls: () => notifier.waitingCount,
    counts: () => store.counts(),
  });
  // What has started, stopped in the reverse order: by stop(), or at once when a later part fails to start.
  const started: (() => Promise<void> | void)[] = [];
  const stopStarted = async () => {
    for (const stopPart of started.splice(0).reverse()) await stopPart();
  };
  const store = await openStore(options, logger, metrics);
  started.push(() => store.close());
  let services: HubServices;
  let servers: HttpServers;
  let generatedAdminKey: string | undefined;
  const readiness = new Readiness((timeoutMs) => store.ping(timeoutMs), logger);
  try {
    const loaded = fileStart ?? (await sharedStart(options, logger, store));
    if (!fileStart) warnIgnored(logger, 'configuration in the database', loaded.file.ignored);
    const addresses = fileAddresses ?? listenPlan(options, loaded.file.config.listenUris);
    generatedAdminKey = loaded.generatedAdminKey;
    // PostgreSQL: what other hub processes commit wakes this one's polls too.
    const feed = options.databaseUrl
      ? await startCrossProcessWakeUps({
          url: options.databaseUrl,
          sync: options.sync,
          lockWaitMs: options.lockWaitMs,
          log: logger,
          announce: notifier,
          fallbackMs: options.pgPollMs,
          lags: {
            notification: (ms) => metrics.notificationLag.observe(Math.max(0, ms) / 1000),
            tailRead: (ms) => metrics.tailReadLag.observe(Math.max(0, ms) / 1000),
          },
        })
      : undefined;
    if (feed) {
      started.push(() => feed.stop());
      registerCrossProcessMetrics(metrics.registry, feed);
    }
    const built = await createServices(options, logger, loaded, store, notifier, metrics, feed?.polls);
    services = built.services;
    const { expiry, sweeper, processes } = built;
    const { configuration } = services;
    if (configuration instanceof SharedConfiguration) {
      // Another process's change of the configuration document, applied here.
      started.push(() => configuration.stopWatching());
      await feed?.listen(CONFIGURATION_CHANNEL, () => configuration.hint());
      configuration.watch(CONFIGURATION_FALLBACK_MS);
    }
    // An address that reached the failed-authentication limit through another process is blocked here too.
    await feed?.listen(AUTH_FAILURE_CHANNEL, (address) => services.authFailures.blockedElsewhere(address));
    await sweeper.discountDowntime();
    await expiry.start();
    started.push(() => expiry.stop());
    sweeper.start();
    started.push(() => sweeper.stop());
    await processes.start();
    started.push(() => processes.stop());
    servers = await serveHttp(createApp(services, readiness).callback(), addresses, options, logger);
  } catch (error) {
    await stopStarted();
    throw error;
  }
  readiness.serve();

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      readiness.stop();
      await servers.close(() => notifier.endAll());
      await stopStarted();
    })();
    return stopping;
  };

  return {
    url: servers.urls[0],
    port: servers.port,
    urls: servers.urls,
    reloadConfiguration: async () =>
      (await services.management.configurationFile.reload(false, undefined, { by: '(signal)', reason: 'reload' }))
        .changed,
    services,
    database: store.database,
    generatedAdminKey,
    stop,
  };
}
