/**
 * The composition root: builds the database, the domain services, the notifier, the timers and the
 * HTTP server once, and owns their start and stop. The CLI and the tests both build hubs through it.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Logger } from 'pino';
import { defaultConfiguration, generateAccessKey, readConfigurationText, writeFileAtomically } from './config/configFile.js';
import { parseConfiguration, serializeConfiguration } from './config/xmlFile.js';
import type { OpenedDatabase } from './db/open.js';
import { closeDatabase, migrateToLatest, openDatabase } from './db/open.js';
import { CallerDirectory } from './hub/caller.js';
import { Configuration } from './hub/configuration.js';
import { Descriptors } from './hub/descriptors.js';
import { ExpiryTimer } from './hub/expiry.js';
import { Management } from './hub/management.js';
import { Messages } from './hub/messages.js';
import { Notifier } from './hub/notifier.js';
import { PackageLogs } from './hub/packageLogs.js';
import { StateObjects } from './hub/stateObjects.js';
import { Subscriptions } from './hub/subscriptions.js';
import { Sweeper } from './hub/sweeper.js';
import { createApp } from './http/app.js';
import type { HubServices } from './http/context.js';
import { listenAddress } from './listen.js';
import { createLogger } from './logger.js';
import type { HubOptions } from './settings.js';
import { HubMetrics } from './metrics.js';
import { PollGate } from './hub/pollGate.js';
import { AuthFailureThrottle } from './hub/authFailureThrottle.js';
import { countSubscriptions } from './store/subscriptions.js';
import { countQueuedMessages } from './store/messages.js';
import { countStateObjects } from './store/stateObjects.js';
import { TransactionBatcher } from './db/batch.js';
import { StateObjectStatements } from './store/stateObjectStatements.js';
import { MessageStatements } from './store/messageStatements.js';
import { SubscriptionStatements } from './store/subscriptions.js';
import { Repository } from './hub/repository.js';
import { Overview } from './hub/overview.js';

export const HUB_VERSION = '0.3.0';

export interface Hub {
  /** `http://HOST:PORT` once started. */
  readonly url: string;
  readonly port: number;
  readonly services: HubServices;
  readonly database: OpenedDatabase;
  /** Set when the first start generated the administrator's access key. */
  readonly generatedAdminKey: string | undefined;
  stop(): Promise<void>;
}

/** Reads the configuration file; on a first start writes the default one. Throws before any database work. */
function loadConfiguration(options: HubOptions) {
  const text = readConfigurationText(options.configPath);
  if (text !== undefined) return { config: parseConfiguration(text), generatedAdminKey: undefined };
  const generatedAdminKey = options.adminKey ? undefined : generateAccessKey();
  const config = defaultConfiguration(options.adminKey ?? (generatedAdminKey as string));
  writeFileAtomically(options.configPath, serializeConfiguration(config));
  return { config, generatedAdminKey };
}

/** Connections the kernel may hold before the hub accepts them (capped by net.core.somaxconn). */
const LISTEN_BACKLOG = 4096;

export async function startHub(options: HubOptions, logger: Logger = createLogger(options.logLevel)): Promise<Hub> {
  const { config, generatedAdminKey } = loadConfiguration(options);
  fs.mkdirSync(options.dataDir, { recursive: true });
  const notifier = new Notifier();
  // The counts are read at scrape time only, long after `db` below exists.
  const metrics = new HubMetrics({
    waitingPolls: () => notifier.waitingCount,
    counts: async () => ({
      subscriptions: await countSubscriptions(db),
      queuedMessages: await countQueuedMessages(db),
      stateObjects: await countStateObjects(db),
    }),
  });
  const database = openDatabase(path.join(options.dataDir, 'hub.db'), options.sync, (ms) => metrics.commitDuration.observe(ms / 1000));
  const { db } = database;
  const readiness = { ready: false };
  try {
    await migrateToLatest(db);
  } catch (error) {
    await db.destroy();
    throw error;
  }

  const configuration = new Configuration(db, options.configPath, config);
  await configuration.replace(config, { writeFile: false });

  const gate = new PollGate(options.maxPollsPerCredential);
  const callers = new CallerDirectory(db);
  const batcher = new TransactionBatcher(db, database.sqlite, {
    lockWaitMs: options.lockWaitMs,
    committed: (commitMs, pieces) => {
      metrics.commitDuration.observe(commitMs / 1000);
      metrics.batchSize.observe(pieces);
    },
  });
  const stateObjectStatements = new StateObjectStatements(db, database.sqlite);
  const subscriptions = new Subscriptions(batcher, new SubscriptionStatements(db, database.sqlite), callers, notifier, gate);
  const expiry = new ExpiryTimer(db, batcher, stateObjectStatements, notifier, (error) => logger.error({ err: error }, 'expiry failed'));
  const counters = { droppedMessages: 0 };
  const messages = new Messages(batcher, new MessageStatements(db, database.sqlite), notifier, subscriptions, callers, options.messageQueueLimit, {
    dropped: (n) => {
      counters.droppedMessages += n;
      metrics.droppedMessages.inc(n);
      logger.warn({ dropped: n, total: counters.droppedMessages }, 'message queue full: oldest messages dropped');
    },
  });
  const packageLogs = new PackageLogs(db, logger, options.logRetention);
  const repository = new Repository(db, path.join(options.dataDir, 'repository'), path.join(options.dataDir, 'tmp'), {
    maxEntries: 1000,
    maxUncompressedBytes: options.maxPackageUnpackedBytes,
    maxPackageBytes: options.maxPackageBytes,
    downloadTimeoutMs: options.downloadTimeoutMs,
    maxRedirects: 5,
  }, logger);
  await repository.start();
  const services: HubServices = {
    options,
    logger,
    configuration,
    stateObjects: new StateObjects(db, batcher, stateObjectStatements, notifier, subscriptions, expiry),
    messages,
    packageLogs,
    descriptors: new Descriptors(db),
    management: new Management(db, configuration, messages, options.configPath, repository),
    repository,
    version: HUB_VERSION,
    metrics,
    authFailures: new AuthFailureThrottle({
      baseMs: options.authFailureDelayMs,
      stepMs: options.authFailureStepMs,
      maxMs: options.authFailureMaxDelayMs,
      limit: options.authFailureLimit,
    }),
    overview: new Overview(db, configuration),
  };
  const sweeper = new Sweeper(db, notifier, packageLogs, logger, options.subscriptionIdleMs, options.sweepIntervalMs);
  await sweeper.discountDowntime();
  await expiry.start();
  sweeper.start();

  const app = createApp(services, readiness);
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 30_000;
  // Long-polls last up to 120 s; a whole request may take longer than that only if it is stuck.
  server.requestTimeout = 180_000;
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const body = JSON.stringify({
      Message: tooLarge ? 'The request address or headers are too large.' : 'The request is not valid HTTP.',
      ...(tooLarge ? { MessageDetail: 'Send large values in the body of a POST request.' } : {}),
    });
    const status = tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request';
    socket.end(`HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });

  const address = listenAddress(configuration.current.listenUris, { host: options.host, port: options.port });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // After a restart or a power cut every device reconnects at once: Node's default accept queue (511)
    // would drop the rest of the SYNs and make those devices wait out a one-second retransmit.
    server.listen({ port: address.port, host: address.host, backlog: LISTEN_BACKLOG }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = address.host === undefined || address.host === '0.0.0.0' || address.host === '::' ? 'localhost' : address.host;
  readiness.ready = true;

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      readiness.ready = false;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      notifier.endAll();
      // Connections become idle as their last responses go out: close each as soon as it is.
      const idle = setInterval(() => server.closeIdleConnections(), 25);
      server.closeIdleConnections();
      const force = setTimeout(() => server.closeAllConnections(), 3000);
      await closed;
      clearInterval(idle);
      clearTimeout(force);
      await expiry.stop();
      await sweeper.stop();
      await closeDatabase(database);
    })();
    return stopping;
  };

  return {
    url: `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}`,
    port,
    services,
    database,
    generatedAdminKey,
    stop,
  };
}
