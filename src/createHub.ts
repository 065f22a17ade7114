/**
 * The composition root: builds the database, the domain services, the notifier, the timers and the
 * HTTP server once, and owns their start and stop. The CLI and the tests both build hubs through it.
 */
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Logger } from 'pino';
import { defaultConfiguration, generateAccessKey, readConfigurationText, writeFileAtomically } from './config/configFile.js';
import type { ConfigurationFile } from './config/model.js';
import { ConfigurationError, managementAccessProblem } from './config/validate.js';
import { parseConfigurationFile, serializeConfiguration } from './config/xmlFile.js';
import type { OpenedDatabase } from './db/open.js';
import { lockDataDirectory } from './db/dataDirectory.js';
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
import { rememberRequestTarget } from './http/consoleAssets.js';
import { detachablePolls } from './http/detached.js';
import type { HubServices } from './http/context.js';
import type { ListenAddress } from './listen.js';
import { listenAddresses } from './listen.js';
import { createLogger } from './logger.js';
import type { HubOptions } from './settings.js';
import { HubMetrics } from './metrics.js';
import { PollGate } from './hub/pollGate.js';
import { AuthFailureThrottle } from './hub/authFailureThrottle.js';
import { Repository } from './hub/repository.js';
import { Overview } from './hub/overview.js';
import { openSqliteStore } from './store/sqliteStore.js';

export const HUB_VERSION = '0.3.0';

export interface Hub {
  /** `http://HOST:PORT` (plus the first listen URI's path prefix) once started. */
  readonly url: string;
  readonly port: number;
  /** Every address served, one per listen URI (several when the configuration lists several). */
  readonly urls: string[];
  readonly services: HubServices;
  readonly database: OpenedDatabase;
  /** Set when the first start generated the administrator's access key. */
  readonly generatedAdminKey: string | undefined;
  /**
   * Applies the configuration file as it is on disk now (what `GET management/configuration/reload`
   * does, for SIGHUP). Throws ConfigurationError, changing nothing, when the file would not start.
   */
  reloadConfiguration(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Reads the configuration file; on a first start writes the default one. Throws ConfigurationError
 * before any database work when the file could not run a hub.
 */
async function loadConfiguration(options: HubOptions): Promise<{ file: ConfigurationFile; text: string; generatedAdminKey?: string }> {
  const text = await readConfigurationText(options.configPath);
  if (text !== undefined) {
    const file = parseConfigurationFile(text);
    const problem = managementAccessProblem(file.config);
    if (problem) throw new ConfigurationError(`${problem}. Give one credential enable="true" enableManagementAPI="true" in the file and start again.`);
    return { file, text };
  }
  const generatedAdminKey = options.adminKey ? undefined : generateAccessKey();
  const config = defaultConfiguration(options.adminKey ?? (generatedAdminKey as string));
  const written = serializeConfiguration(config);
  await writeFileAtomically(options.configPath, written);
  return { file: { config, appSettings: {}, ignored: [] }, text: written, generatedAdminKey };
}

/** Why this hub cannot serve `address`, as a ConfigurationError, or nothing when it can. */
function checkListen(options: HubOptions, address: ListenAddress): void {
  if (address.protocol !== 'https' || (options.tlsCertPath && options.tlsKeyPath)) return;
  throw new ConfigurationError(
    `the listen URI "${address.uri}" is https: give the certificate and key as PEM files with HUB_TLS_CERT and HUB_TLS_KEY, ` +
      'or listen on http:// and let a reverse proxy (nginx, Caddy) terminate TLS in front of the hub (docs/operations.md)',
  );
}

/**
 * A request handler serving the hub under each of `prefixes` ('' = at the root): `/constellation/rest/…`
 * reaches the hub as `/rest/…`. Prefixes match whatever the case and however many slashes separate the
 * segments, as the HttpListener prefixes of Constellation did. Anything outside every prefix is 404.
 */
function underPrefixes(prefixes: string[], handler: http.RequestListener): http.RequestListener {
  if (prefixes.includes('')) return handler;
  const lowered = prefixes.map((p) => p.toLowerCase());
  const notFoundBody = JSON.stringify({ Message: 'No interface is served at this address.', MessageDetail: `The hub is served under ${prefixes.map((p) => `${p}/`).join(', ')}.` });
  return (req, res) => {
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const pathname = (query < 0 ? url : url.slice(0, query)).replace(/\/{2,}/g, '/');
    const lower = pathname.toLowerCase();
    const prefix = lowered.find((p) => lower === p || lower.startsWith(`${p}/`));
    if (prefix === undefined) {
      res.writeHead(404, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(notFoundBody) });
      res.end(notFoundBody);
      return;
    }
    const rest = pathname.slice(prefix.length);
    req.url = `${rest.startsWith('/') ? rest : `/${rest}`}${query < 0 ? '' : url.slice(query)}`;
    handler(req, res);
  };
}

/** Connections the kernel may hold before the hub accepts them (capped by net.core.somaxconn). */
const LISTEN_BACKLOG = 4096;

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

/**
 * Node checks the headers deadline only every `connectionsCheckingInterval` (30 s by default): headers
 * trickled a byte at a time held a connection for up to a minute. Checked every second, they get as
 * long as a body (`bodyTimeoutMs`). An idle keep-alive connection is not affected: the deadline
 * starts with the first byte of a request.
 */
const serverOptions = (options: HubOptions) => ({ connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(options.bodyTimeoutMs / 4))) });

function configureServer(server: http.Server, options: HubOptions): void {
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = options.bodyTimeoutMs;
  // Long-polls last up to 120 s; a whole request may take longer than that only if it is stuck.
  server.requestTimeout = Math.max(180_000, options.bodyTimeoutMs);
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const timedOut = error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    const body = JSON.stringify(
      tooLarge
        ? { Message: 'The request address or headers are too large.', MessageDetail: 'Send large values in the body of a POST request.' }
        : timedOut
          ? { Message: `The request did not arrive within ${options.bodyTimeoutMs / 1000} s.`, MessageDetail: 'Send the request line and headers at once.' }
          : { Message: 'The request is not valid HTTP.' },
    );
    const status = tooLarge ? '431 Request Header Fields Too Large' : timedOut ? '408 Request Timeout' : '400 Bad Request';
    socket.end(`HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
}

function listen(server: http.Server, address: ListenAddress): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // After a restart or a power cut every device reconnects at once: Node's default accept queue (511)
    // would drop the rest of the SYNs and make those devices wait out a one-second retransmit.
    server.listen({ port: address.port, host: address.host, backlog: LISTEN_BACKLOG }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

async function startLockedHub(options: HubOptions, logger: Logger): Promise<Hub> {
  const { file, text: configText, generatedAdminKey } = await loadConfiguration(options);
  const { config } = file;
  let addresses: ListenAddress[];
  try {
    addresses = listenAddresses(config.listenUris, { host: options.host, port: options.port });
  } catch (error) {
    throw new ConfigurationError(`<listenUris>: ${(error as Error).message}`);
  }
  addresses.forEach((address) => checkListen(options, address));
  if (file.ignored.length) logger.warn({ ignored: file.ignored }, `configuration file ${options.configPath}: not used by this hub (ignored): ${file.ignored.join('; ')}`);
  const tls = addresses.some((a) => a.protocol === 'https')
    ? { cert: fs.readFileSync(options.tlsCertPath as string), key: fs.readFileSync(options.tlsKeyPath as string) }
    : undefined;
  fs.mkdirSync(options.dataDir, { recursive: true });
  const notifier = new Notifier();
  // The counts are read at scrape time only, long after `store` below exists.
  const metrics = new HubMetrics({
    waitingPolls: () => notifier.waitingCount,
    counts: () => store.counts(),
  });
  const store = await openSqliteStore({
    file: path.join(options.dataDir, 'hub.db'),
    sync: options.sync,
    lockWaitMs: options.lockWaitMs,
    messageRetention: { count: options.messageQueueLimit, ms: options.messageRetentionMs },
    maxSubscriptionsPerCredential: options.maxSubscriptionsPerCredential,
    vacuumIntervalMs: options.vacuumIntervalMs,
    logger,
    committed: (commitMs, pieces) => {
      metrics.commitDuration.observe(commitMs / 1000);
      if (pieces !== undefined) metrics.batchSize.observe(pieces);
    },
  });
  const readiness = { ready: false };

  const configuration = new Configuration(store.configuration, options.configPath, config, configText);
  await configuration.recordStart({ by: generatedAdminKey === undefined ? '(file)' : '(first start)', reason: 'start' });

  const gate = new PollGate(options.maxPollsPerCredential);
  const callers = new CallerDirectory(store.callers);
  const subscriptions = new Subscriptions(store.subscriptions, callers, notifier, gate);
  const expiry = new ExpiryTimer(store.stateObjectReads, store.stateObjects, notifier, (error) => logger.error({ err: error }, 'expiry failed'));
  const counters = { missedMessages: 0 };
  const messages = new Messages(store.messages, store.subscriptions, notifier, subscriptions, callers, {
    missed: (subscription, caller, n) => {
      counters.missedMessages += n;
      metrics.droppedMessages.inc(n);
      logger.warn({ subscription, caller: caller.friendlyName, credential: caller.credential.name, missed: n, total: counters.missedMessages },
        'message subscription fell behind the log retention: the oldest messages it had not read are gone');
    },
  });
  const packageLogs = new PackageLogs(store.packageLogs, notifier, logger, options.logRetention);
  const repository = new Repository(store.repository, path.join(options.dataDir, 'repository'), path.join(options.dataDir, 'tmp'), {
    maxEntries: 1000,
    maxUncompressedBytes: options.maxPackageUnpackedBytes,
    maxPackageBytes: options.maxPackageBytes,
    downloadTimeoutMs: options.downloadTimeoutMs,
    maxRedirects: 5,
  }, logger);
  await repository.start();
  const descriptors = new Descriptors(store.descriptors);
  const services: HubServices = {
    options,
    logger,
    configuration,
    stateObjects: new StateObjects(store.stateObjectReads, store.stateObjects, store.subscriptions, notifier, subscriptions, expiry),
    messages,
    packageLogs,
    descriptors,
    management: new Management(store.settings, configuration, messages, options.configPath, repository, (address) => checkListen(options, address)),
    repository,
    version: HUB_VERSION,
    metrics,
    authFailures: new AuthFailureThrottle({
      // Constellation's appSettings DelayAfterAuthentificationError, when the file has it, sets the base delay.
      baseMs: file.appSettings.delayAfterAuthenticationErrorMs ?? options.authFailureDelayMs,
      stepMs: options.authFailureStepMs,
      maxMs: options.authFailureMaxDelayMs,
      limit: options.authFailureLimit,
    }),
    overview: new Overview(store.activity, descriptors, configuration),
  };
  const sweeper = new Sweeper(store.housekeeping, notifier, packageLogs, store.messages, logger, options.subscriptionIdleMs, options.sweepIntervalMs, options.messageRetentionMs);
  await sweeper.discountDowntime();
  await expiry.start();
  sweeper.start();

  const app = createApp(services, readiness);
  const callback = app.callback();
  // One server per host and port; several listen URIs on one port differ by their path prefix.
  const groups = new Map<string, ListenAddress[]>();
  for (const address of addresses) {
    const key = `${address.host ?? '*'}:${address.port}`;
    groups.set(key, [...(groups.get(key) ?? []), address]);
  }
  const servers: http.Server[] = [];
  const urls: string[] = [];
  try {
    for (const group of groups.values()) {
      const prefixes = group.map((a) => a.prefix);
      const handler = rememberRequestTarget(prefixes, underPrefixes(prefixes, detachablePolls(callback)));
      const server =
        group[0].protocol === 'https' && tls ? https.createServer({ ...tls, ...serverOptions(options) }, handler) : http.createServer(serverOptions(options), handler);
      servers.push(server);
      configureServer(server, options);
      await listen(server, group[0]);
      const port = (server.address() as AddressInfo).port;
      const host = group[0].host;
      const shownHost = host === undefined || host === '0.0.0.0' || host === '::' ? 'localhost' : host;
      for (const a of group) urls.push(`${a.protocol}://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}${a.prefix}`);
    }
  } catch (error) {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    await expiry.stop();
    await sweeper.stop();
    await store.close();
    throw error;
  }
  const port = (servers[0].address() as AddressInfo).port;
  readiness.ready = true;

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      readiness.ready = false;
      const closed = Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
      notifier.endAll();
      // Connections become idle as their last responses go out: close each as soon as it is.
      const closeIdle = () => servers.forEach((server) => server.closeIdleConnections());
      const idle = setInterval(closeIdle, 25);
      closeIdle();
      const force = setTimeout(() => servers.forEach((server) => server.closeAllConnections()), 3000);
      await closed;
      clearInterval(idle);
      clearTimeout(force);
      await expiry.stop();
      await sweeper.stop();
      await store.close();
    })();
    return stopping;
  };

  return {
    url: urls[0],
    port,
    urls,
    reloadConfiguration: async () => {
      await services.management.reload(false, undefined, { by: '(signal)', reason: 'reload' });
    },
    services,
    database: store.database,
    generatedAdminKey,
    stop,
  };
}
