/**
 * ASP.NET SignalR 2's endpoints under `/signalr` (research/signalr.md §1.2): negotiate, connect,
 * reconnect, start, send, poll, abort, ping, answered here (Koa) and over long polling; server-sent
 * events and WebSockets (the HTTP server's upgrade) in pushed.ts. Every request is authenticated
 * again; a request naming a connection this process does not hold is served from its token (the
 * connection's subscriptions are in the store).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type Koa from 'koa';
import type { Context } from 'koa';
import { Gauge } from 'prom-client';
import { hubError } from '../../errors.js';
import type { HubServices, HubState } from '../context.js';
import { clientGone } from '../context.js';
import { servedPrefix } from '../paths.js';
import { checkSameCaller, HubConnection } from './connection.js';
import { decodeToken, newConnectionIds } from './connectionToken.js';
import type { HubTable } from './hubs.js';
import { invoke } from './hubs.js';
import type { Lookup } from './identity.js';
import { checkHubRights, requestedHubs, signalrCaller } from './identity.js';
import type { HubResult, SignalRTimings, TransportName } from './protocol.js';
import { DEFAULT_TIMINGS, negotiation, parseInvocation, persistentResponse, protocolVersion } from './protocol.js';
import type { ConnectionRegistry } from './registry.js';
import { pushedTransports } from './pushed.js';
import { lookupOf, readForm, SIGNALR_PATH } from './requests.js';

/** What a hub does when a connection starts (OnConnected) or comes back (OnReconnected). */
export interface HubLifecycle {
  connected(connection: HubConnection, reconnection: boolean, lookup: Lookup): Promise<void>;
  /** Starts what the hubs watch for their connections (settings); returns its stop. */
  watch(connections: ConnectionRegistry): () => void;
}

export interface SignalR {
  /** Answers a `/signalr/…` request; undefined, answering nothing, for every other path. */
  answer(ctx: Koa.ParameterizedContext<HubState>): Promise<void> | undefined;
  /** A WebSocket upgrade of `/signalr/connect` or `/reconnect`: true when it took the socket. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  readonly connections: ConnectionRegistry;
  /** Ends every connection (shutdown). */
  close(): void;
}

export function createSignalR(
  services: HubServices,
  table: HubTable,
  lifecycle: HubLifecycle,
  connections: ConnectionRegistry,
): SignalR {
  const { options, logger } = services;
  const timings: SignalRTimings = options.signalrTimings ?? DEFAULT_TIMINGS;
  const stopWatching = lifecycle.watch(connections);

  new Gauge({
    name: 'hub_signalr_connections',
    help: 'SignalR connections this process serves, by hub and transport',
    labelNames: ['hub', 'transport'] as const,
    registers: [services.metrics.registry],
    collect() {
      this.reset();
      for (const { hub, transport, n } of connections.counts()) this.set({ hub, transport }, n);
    },
  });

  /**
   * The connection ends here for good (abort, or its client gone for DisconnectTimeout): so do its
   * subscriptions, unless used since `usedSince` (another process serves the connection now).
   */
  async function endConnection(connection: HubConnection, usedSince?: number): Promise<void> {
    connections.remove(connection);
    const { messages, stateObjects } = connection.ids;
    try {
      await services.subscriptions.remove(connection.caller, [messages, stateObjects], usedSince);
    } catch (error) {
      logger.warn({ err: error, connection: connection.ids.id }, 'SignalR subscriptions left to the idle sweep');
    }
  }

  // Only a process that took for the connection knows when it was last served: one that never did
  // leaves its subscriptions to the process serving it (or to the idle sweep).
  const expireLater = (connection: HubConnection) =>
    connection.expireAfter(timings.disconnectTimeoutS * 1000, () => {
      if (connection.lastTakeEnded === undefined) connections.remove(connection);
      else void endConnection(connection, connection.lastTakeEnded + 1);
    });

  const pushed = pushedTransports({
    services,
    timings,
    connectionOf,
    reconnected: (connection) => lifecycle.connected(connection, true, () => undefined),
    call,
    expireLater,
  });

  /** The caller, or the refusal the REST interfaces give a wrong key (403), slowed as theirs. */
  async function callerOf(lookup: Lookup, ip: string) {
    const retryAfter = services.authFailures.blockedFor(ip);
    if (retryAfter > 0) throw hubError('TooManyAuthFailures', { seconds: retryAfter });
    const caller = signalrCaller(services, lookup);
    if (caller) return caller;
    logger.warn({ ip, sentinelName: lookup('SentinelName')?.slice(0, 128) }, 'SignalR authentication failed');
    services.metrics.authFailures.inc();
    const delay = await services.authFailures.failed(ip);
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    throw hubError('AccessDenied');
  }

  /** The connection the token names, as this caller's: held here, or served here from the store. */
  async function connectionOf(lookup: Lookup, ip: string): Promise<HubConnection> {
    const caller = await callerOf(lookup, ip);
    const ids = decodeToken(lookup('connectionToken'));
    if (!ids || connections.hasEnded(ids.id)) throw hubError('SignalRUnknownConnection');
    const held = connections.get(ids.id);
    if (held) {
      checkSameCaller(held, caller);
      return held;
    }
    const hubs = requestedHubs(lookup('connectionData'));
    checkHubRights(caller, hubs);
    const connection = new HubConnection(ids, caller, hubs, services, false);
    await connection.feed.openMessages().catch(() => {
      throw hubError('SignalRUnknownConnection');
    });
    connections.add(connection);
    return connection;
  }

  async function negotiate(ctx: Context, lookup: Lookup): Promise<void> {
    const caller = await callerOf(lookup, ctx.ip);
    const hubs = requestedHubs(lookup('connectionData'));
    checkHubRights(caller, hubs);
    const count = connections.countFor(caller.credential.name);
    if (count >= options.signalrMaxConnectionsPerCredential)
      throw hubError('SignalRTooManyConnections', { credential: caller.credential.name, count });
    const connection = new HubConnection(newConnectionIds(), caller, hubs, services, true);
    connections.add(connection);
    expireLater(connection);
    const prefix = servedPrefix(ctx.req);
    ctx.body = negotiation(
      `${prefix}/signalr`,
      connection.token,
      connection.ids.id,
      protocolVersion(lookup('clientProtocol')),
      timings,
    );
  }

  function transportOf(lookup: Lookup): TransportName {
    const transport = lookup('transport');
    if (transport === 'longPolling' || transport === 'serverSentEvents' || transport === 'webSockets') return transport;
    throw hubError('SignalRBadRequest', {
      problem: `the transport '${String(transport).slice(0, 32)}' is not supported`,
    });
  }

  /** Long polling: one answer now (connect) or after a wait (poll, reconnect). */
  async function longPoll(ctx: Context, connection: HubConnection, action: string, messageId: string | undefined) {
    connection.transport = 'longPolling';
    connection.keep();
    try {
      if (action === 'connect') {
        await connection.feed.openMessages();
        ctx.body = persistentResponse(connection.currentCursor, [], true);
        return;
      }
      if (action === 'reconnect') await lifecycle.connected(connection, true, () => undefined);
      ctx.body = await connection.poll(messageId, timings.connectionTimeoutS * 1000, clientGone(ctx));
    } finally {
      if (!connection.ended) expireLater(connection);
    }
  }

  async function send(ctx: Context, connection: HubConnection, data: string | undefined): Promise<void> {
    connection.keep();
    try {
      ctx.body = await call(connection, data);
    } finally {
      if (!connection.ended && connection.transport !== 'webSockets' && !connection.detach) expireLater(connection);
    }
  }

  function call(connection: HubConnection, data: string | undefined): Promise<HubResult> {
    const parsed = parseInvocation(data ?? '');
    if ('error' in parsed) return Promise.resolve({ I: parsed.id, E: parsed.error });
    return invoke(table, connection, parsed, services);
  }

  function cors(ctx: Context): void {
    const origin = ctx.get('Origin');
    if (!origin) return;
    ctx.set('Access-Control-Allow-Origin', origin);
    ctx.set('Access-Control-Allow-Credentials', 'true');
    ctx.set('Vary', 'Origin');
  }

  const answer = async (ctx: Context, matched: RegExpExecArray): Promise<void> => {
    cors(ctx);
    if (ctx.method === 'OPTIONS') {
      ctx.set('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
      const asked = ctx.get('Access-Control-Request-Headers');
      if (asked) ctx.set('Access-Control-Allow-Headers', asked);
      ctx.set('Access-Control-Max-Age', '600');
      ctx.status = 204;
      return;
    }
    if (ctx.method !== 'GET' && ctx.method !== 'POST') throw hubError('MethodNotAllowed');
    const action = matched[1].toLowerCase();
    const form = await readForm(ctx);
    const query = new URLSearchParams(ctx.querystring);
    const lookup = lookupOf(query, ctx.req.headers);
    const formValue = (name: string) => form.get(name) ?? lookup(name) ?? undefined;
    ctx.set('Cache-Control', 'no-cache');
    switch (action) {
      case 'negotiate':
        return negotiate(ctx, lookup);
      case 'ping':
        await callerOf(lookup, ctx.ip);
        ctx.body = { Response: 'pong' };
        return;
      case 'connect':
      case 'reconnect':
      case 'poll': {
        const connection = await connectionOf(lookup, ctx.ip);
        const transport = transportOf(lookup);
        if (transport === 'webSockets') throw hubError('SignalRBadRequest', { problem: 'WebSockets needs an upgrade' });
        if (transport === 'serverSentEvents' && action !== 'poll')
          return pushed.serverSentEvents(ctx, connection, action, lookup('messageId'));
        return longPoll(ctx, connection, action, formValue('messageId'));
      }
      case 'start': {
        const connection = await connectionOf(lookup, ctx.ip);
        if (!connection.started) {
          connection.started = true;
          await lifecycle.connected(connection, false, lookup);
        }
        ctx.body = { Response: 'started' };
        return;
      }
      case 'send':
        return send(ctx, await connectionOf(lookup, ctx.ip), formValue('data'));
      case 'abort': {
        await endConnection(await connectionOf(lookup, ctx.ip));
        ctx.body = '';
        ctx.status = 200;
        return;
      }
      default:
        throw hubError('NotFound', { path: ctx.path });
    }
  };

  // Not async for the other paths: every REST request asks, and an async function costs each a promise.
  const answerIfSignalR = (ctx: Koa.ParameterizedContext<HubState>) => {
    const matched = SIGNALR_PATH.exec(ctx.path);
    return matched ? answer(ctx, matched) : undefined;
  };

  return {
    answer: answerIfSignalR,
    upgrade: pushed.upgrade,
    connections,
    close: () => {
      stopWatching();
      connections.endAll();
      pushed.close();
    },
  };
}
