/**
 * The composition root: opens the store the options choose (store/index.ts) with the notifier, builds
 * the domain services over it and what its engine can do (hubServices.ts) and the HTTP server once, and
 * owns their start and stop in order. It names no engine: what differs is a capability of OpenedStore.
 * The CLI and the tests both build hubs through it.
 */
import fs from 'node:fs';
import type { Logger } from 'pino';
import { startingConfiguration } from './config/configFile.js';
import { lockDataDirectory } from './dataDirectory.js';
import { SharedConfiguration } from './hub/configuration/configurationShared.js';
import { Notifier } from './hub/polls/notifier.js';
import { Readiness } from './hub/readiness.js';
import { createApp } from './http/app.js';
import type { HubServices } from './http/context.js';
import type { HttpServers } from './http/server.js';
import { serveHttp } from './http/server.js';
import type { FirstAdminKey } from './firstAdminKey.js';
import { keepFirstAdminKey, pendingFirstAdminKey } from './firstAdminKey.js';
import type { SignalR } from './http/signalr/index.js';
import { signalr } from './http/signalr/index.js';
import { createServices } from './hubServices.js';
import type { HubStore } from './hub/ports/hubStore.js';
import { listenPlan, sharedStart, warnIgnored } from './hubStart.js';
import { createLogger } from './logger.js';
import { HubMetrics } from './metrics.js';
import type { HubOptions } from './settings.js';
import { openStore, sharedStore } from './store/index.js';

export interface Hub {
  /** `http://HOST:PORT` (plus the first listen URI's path prefix) once started. */
  readonly url: string;
  readonly port: number;
  /** Every address served, one per listen URI (several when the configuration lists several). */
  readonly urls: string[];
  readonly services: HubServices;
  /** The store it runs on, for the hub's own tests and tools (store/index.ts `sqliteDatabaseOf`). */
  readonly store: HubStore;
  /** Set when this start, the first, generated the administrator's access key. */
  readonly generatedAdminKey: string | undefined;
  /**
   * The key a first start generated (this one's, or an earlier one's that failed) while no start has
   * succeeded since, and the file keeping it (firstAdminKey.ts): the CLI shows it, then forgets it.
   */
  readonly firstAdminKey: FirstAdminKey | undefined;
  /**
   * Applies the configuration file as it is on disk now, or the store's document when it keeps one (what
   * `GET management/configuration/reload` does, for SIGHUP). Answers false when it was the text already
   * applied (nothing changed). Throws ConfigurationError, changing nothing, when it would not start.
   */
  reloadConfiguration(): Promise<boolean>;
  stop(): Promise<void>;
}

/**
 * Starts a hub on `options.dataDir`, which it holds alone until stopped: a second hub on the same
 * directory fails here with DataDirectoryInUse naming the first one's pid (dataDirectory.ts).
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

/** How often a hub whose store keeps the configuration re-reads the document without a notification. */
const CONFIGURATION_FALLBACK_MS = 5_000;

async function startLockedHub(options: HubOptions, logger: Logger): Promise<Hub> {
  // The file is the configuration, checked before any database work, unless the store is shared: it then
  // keeps it as a document every process applies (configurationSharedStart.ts), read once it is open.
  // A key the first start generates is kept in the data directory before anything holds it.
  const keep = (key: string) => keepFirstAdminKey(options.dataDir, key);
  const fileStart = sharedStore(options)
    ? undefined
    : await startingConfiguration(options.configPath, options.adminKey, keep);
  if (fileStart) warnIgnored(logger, `configuration file ${options.configPath}`, fileStart.file.ignored);
  const fileAddresses = fileStart && listenPlan(options, fileStart.file.config.listenUris);
  fs.mkdirSync(options.dataDir, { recursive: true });
  const notifier = new Notifier();
  // The counts are read at scrape time only, long after `store` below exists.
  const metrics = new HubMetrics({
    waitingPolls: () => notifier.waitingCount,
    counts: () => opened.store.counts(),
  });
  // What has started, stopped in the reverse order: by stop(), or at once when a later part fails to start.
  const started: (() => Promise<void> | void)[] = [];
  const stopStarted = async () => {
    for (const stopPart of started.splice(0).reverse()) await stopPart();
  };
  // What other processes sharing the store commit is announced to `notifier` from here on, as this one's own writes.
  const opened = await openStore(options, { logger, metrics, announce: notifier });
  const { store } = opened;
  started.push(() => opened.close());
  let services: HubServices;
  let servers: HttpServers;
  let hubs: SignalR;
  let generatedAdminKey: string | undefined;
  let firstAdminKey: FirstAdminKey | undefined;
  const readiness = new Readiness((timeoutMs) => store.ping(timeoutMs), logger);
  try {
    const loaded = fileStart ?? (await sharedStart(options, logger, opened.sharedConfiguration, keep));
    if (!fileStart) warnIgnored(logger, 'configuration in the database', loaded.file.ignored);
    const addresses = fileAddresses ?? listenPlan(options, loaded.file.config.listenUris);
    generatedAdminKey = loaded.generatedAdminKey;
    firstAdminKey = pendingFirstAdminKey(options.dataDir, loaded.file.config);
    const built = await createServices(options, logger, loaded, opened, notifier, metrics);
    services = built.services;
    const { expiry, sweeper, processes, deliveries } = built;
    // Stopped after the servers (no answer is written any more), before the store closes.
    started.push(() => deliveries.close());
    const { configuration } = services;
    const { sharedConfiguration, otherProcesses } = opened;
    if (configuration instanceof SharedConfiguration && sharedConfiguration) {
      // Another process's change of the configuration document, applied here.
      started.push(() => configuration.stopWatching());
      await sharedConfiguration.onChanged(() => configuration.hint());
      configuration.watch(CONFIGURATION_FALLBACK_MS);
    }
    // An address that reached the failed-authentication limit through another process is blocked here too.
    await otherProcesses?.onAddressBlocked((address) => services.authFailures.blockedElsewhere(address));
    await sweeper.discountDowntime();
    await expiry.start();
    started.push(() => expiry.stop());
    sweeper.start();
    started.push(() => sweeper.stop());
    await processes.start();
    started.push(() => processes.stop());
    hubs = signalr(services);
    servers = await serveHttp(
      createApp(services, readiness, hubs).callback(),
      addresses,
      options,
      logger,
      (req, socket, head) => hubs.upgrade(req, socket, head),
    );
    await processes.listening(servers.hostUrls);
  } catch (error) {
    await stopStarted();
    throw error;
  }
  readiness.serve();

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      readiness.stop();
      await servers.close(() => {
        notifier.endAll();
        hubs.close();
      });
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
    store,
    generatedAdminKey,
    firstAdminKey,
    stop,
  };
}
