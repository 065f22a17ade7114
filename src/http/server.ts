/**
 * The Node HTTP(S) servers in front of the Koa app: one per host and port of the listen addresses, each
 * serving its addresses' path prefixes, with the timeouts and the raw answers to bad HTTP the hub needs.
 */
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { ConfigurationError } from '../config/validate.js';
import type { HubError } from '../errors.js';
import { hubError } from '../errors.js';
import type { ListenAddress } from '../listen.js';
import type { HubOptions } from '../settings.js';
import { rootTargetKeeper } from './consoleAssets.js';
import { markDetachable } from './detached.js';
import { errorAnswer } from './errorMapping.js';
import { collapseSlashes, recordPrefix } from './paths.js';

/** What Koa's `app.callback()` gives: it answers every error itself, so its promise never rejects. */
type KoaCallback = (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>;

/** A WebSocket upgrade (SignalR): true when it took the socket. Its target is rewritten as a request's. */
export type UpgradeHandler = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => boolean;

/** Connections the kernel may hold before the hub accepts them (capped by net.core.somaxconn). */
const LISTEN_BACKLOG = 4096;

export interface HttpServers {
  /** Every address served, one per listen address (grouped by host and port). */
  readonly urls: string[];
  /** The same, a wildcard host named by this machine's host name: where another machine reaches it. */
  readonly hostUrls: string[];
  /** The port of the first listen address (the one the OS chose when it was 0). */
  readonly port: number;
  /**
   * Stops accepting, runs `whileClosing` (which should end the waiting polls), closes each connection
   * once its last answer is out and, after 3 s, the rest.
   */
  close(whileClosing?: () => void): Promise<void>;
}

/** Throws a ConfigurationError when this hub cannot serve `address` (https without a certificate). */
export function checkServable(options: HubOptions, address: ListenAddress): void {
  if (address.protocol !== 'https' || (options.tlsCertPath && options.tlsKeyPath)) return;
  throw new ConfigurationError(
    `the listen URI "${address.uri}" is https: give the certificate and key as PEM files with HUB_TLS_CERT and HUB_TLS_KEY, ` +
      'or listen on http:// and let a reverse proxy (nginx, Caddy) terminate TLS in front of the hub (docs/operations.md)',
  );
}

/** An error's wire status and JSON text, as the error mapping answers it. */
function rawAnswer(error: HubError, logger: Logger): { status: number; text: string } {
  const { status, body } = errorAnswer(error, logger, '', '');
  return { status, text: JSON.stringify(body) };
}

/**
 * The request target as the app sees it, before Koa does: repeated slashes collapsed in its path (the
 * documentation's PowerShell example calls `http://host:8088//rest/consumer/...`), and the hub served
 * under each of `prefixes` ('' = at the root): `/constellation/rest/…` reaches the app as `/rest/…`.
 * Prefixes match whatever the case and however many slashes separate the segments, as the HttpListener
 * prefixes of Constellation did; anything outside every prefix is 404. A request for a prefix itself is
 * remembered for the console's redirect, and a long-poll's response is marked detachable.
 */
function requestTargets(prefixes: string[], app: KoaCallback, logger: Logger, upgrade?: UpgradeHandler) {
  const keepRootTarget = rootTargetKeeper(prefixes);
  const lowered = prefixes.includes('') ? undefined : prefixes.map((p) => p.toLowerCase());
  const outside = rawAnswer(
    hubError('NoInterface', `The hub is served under ${prefixes.map((p) => `${p}/`).join(', ')}.`),
    logger,
  );
  /** Rewrites the request's target for the app; false when it is outside every prefix. */
  const retarget = (req: http.IncomingMessage): boolean => {
    const url = req.url ?? '/';
    if (lowered !== undefined || url.includes('//')) {
      const query = url.indexOf('?');
      let pathname = collapseSlashes(query < 0 ? url : url.slice(0, query));
      if (lowered !== undefined) {
        const lower = pathname.toLowerCase();
        const prefix = lowered.find((p) => lower === p || lower.startsWith(`${p}/`));
        if (prefix === undefined) return false;
        recordPrefix(req, pathname.slice(0, prefix.length));
        const rest = pathname.slice(prefix.length);
        pathname = rest.startsWith('/') ? rest : `/${rest}`;
      }
      req.url = `${pathname}${query < 0 ? '' : url.slice(query)}`;
    }
    return true;
  };
  const request: http.RequestListener = (req, res) => {
    keepRootTarget(req);
    if (!retarget(req)) {
      res.writeHead(outside.status, {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(outside.text),
      });
      res.end(outside.text);
      return;
    }
    markDetachable(req.url as string, res);
    void app(req, res);
  };
  const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    if (!upgrade || !retarget(req) || !upgrade(req, socket, head)) socket.destroy();
  };
  return { request, onUpgrade };
}

/**
 * Node checks the headers deadline only every `connectionsCheckingInterval` (30 s by default): headers
 * trickled a byte at a time held a connection for up to a minute. Checked every second, they get as
 * long as a body (`bodyTimeoutMs`). An idle keep-alive connection is not affected: the deadline
 * starts with the first byte of a request.
 */
const serverOptions = (options: HubOptions) => ({
  connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(options.bodyTimeoutMs / 4))),
});

/** What Node cannot hand to the app (headers too large or too slow, not HTTP), answered as the hub's JSON errors. */
function clientErrorAnswer(error: NodeJS.ErrnoException, options: HubOptions, logger: Logger): string {
  const thrown =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? hubError('HeadersTooLarge')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? hubError('HeadersTimeout', { seconds: options.bodyTimeoutMs / 1000 })
        : hubError('MalformedRequest');
  const { status, text } = rawAnswer(thrown, logger);
  return `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`;
}

function configureServer(server: http.Server, options: HubOptions, logger: Logger): void {
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = options.bodyTimeoutMs;
  // Long-polls last up to 120 s; a whole request may take longer than that only if it is stuck.
  server.requestTimeout = Math.max(180_000, options.bodyTimeoutMs);
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    socket.end(clientErrorAnswer(error, options, logger));
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

const shownUrl = (address: ListenAddress, port: number, wildcardHost = 'localhost') => {
  const { host } = address;
  const shownHost = host === undefined || host === '0.0.0.0' || host === '::' ? wildcardHost : host;
  return `${address.protocol}://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}${address.prefix}`;
};

/**
 * Listens on every address with `app` (a Koa callback) behind the listen prefixes; several listen URIs
 * on one host and port share one server and differ by their path prefix. On a failure the servers
 * already listening are closed and the error is thrown.
 */
export async function serveHttp(
  app: KoaCallback,
  addresses: ListenAddress[],
  options: HubOptions,
  logger: Logger,
  upgrade?: UpgradeHandler,
): Promise<HttpServers> {
  const tls = addresses.some((a) => a.protocol === 'https')
    ? { cert: fs.readFileSync(options.tlsCertPath as string), key: fs.readFileSync(options.tlsKeyPath as string) }
    : undefined;
  const groups = new Map<string, ListenAddress[]>();
  for (const address of addresses) {
    const key = `${address.host ?? '*'}:${address.port}`;
    groups.set(key, [...(groups.get(key) ?? []), address]);
  }
  const servers: http.Server[] = [];
  const urls: string[] = [];
  const hostUrls: string[] = [];
  try {
    for (const group of groups.values()) {
      const prefixes = group.map((a) => a.prefix);
      const { request: handler, onUpgrade } = requestTargets(prefixes, app, logger, upgrade);
      const server =
        group[0].protocol === 'https' && tls
          ? https.createServer({ ...tls, ...serverOptions(options) }, handler)
          : http.createServer(serverOptions(options), handler);
      server.on('upgrade', onUpgrade);
      servers.push(server);
      configureServer(server, options, logger);
      await listen(server, group[0]);
      const port = (server.address() as AddressInfo).port;
      for (const a of group) {
        urls.push(shownUrl(a, port));
        hostUrls.push(shownUrl(a, port, os.hostname()));
      }
    }
  } catch (error) {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    throw error;
  }
  return {
    urls,
    hostUrls,
    port: (servers[0].address() as AddressInfo).port,
    close: async (whileClosing) => {
      const closed = Promise.all(
        servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
      );
      whileClosing?.();
      // Connections become idle as their last responses go out: close each as soon as it is.
      const closeIdle = () => servers.forEach((server) => server.closeIdleConnections());
      const idle = setInterval(closeIdle, 25);
      closeIdle();
      const force = setTimeout(() => servers.forEach((server) => server.closeAllConnections()), 3000);
      await closed;
      clearInterval(idle);
      clearTimeout(force);
    },
  };
}
