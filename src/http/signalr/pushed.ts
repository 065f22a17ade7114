/**
 * The pushed transports: server-sent events (a Koa response held open) and WebSockets (the HTTP
 * server's upgrade of `/signalr/connect` or `/reconnect`). Each serves its connection until it closes:
 * the init message or the replay of what the client missed, then each answer as the store delivers it,
 * keep-alives between; a reader too slow is closed. The connection's state then outlives the socket
 * for DisconnectTimeout (endpoints.ts).
 */
import type { IncomingMessage } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Context } from 'koa';
import { WebSocketServer } from 'ws';
import type { WebSocket } from 'ws';
import { hubError } from '../../errors.js';
import type { HubServices } from '../context.js';
import { errorAnswer } from '../errorMapping.js';
import type { HubConnection } from './connection.js';
import type { Lookup } from './identity.js';
import type { HubResult, SignalRTimings, TransportName } from './protocol.js';
import { MAX_INCOMING_BYTES, persistentResponse } from './protocol.js';
import type { Sink } from './requests.js';
import { Closed, lookupOf, SIGNALR_PATH } from './requests.js';

/** What the pushed transports need of the endpoints. */
export interface PushedNeeds {
  services: HubServices;
  timings: SignalRTimings;
  /** The connection as this caller's (authenticated again), or a refusal. */
  connectionOf(lookup: Lookup, ip: string): Promise<HubConnection>;
  /** OnReconnected of the connection's hubs. */
  reconnected(connection: HubConnection): Promise<void>;
  /** Runs a hub invocation's `data`: its result. */
  call(connection: HubConnection, data: string): Promise<HubResult>;
  /** The client is gone: the state lives DisconnectTimeout longer unless it comes back. */
  expireLater(connection: HubConnection): void;
}

export interface PushedTransports {
  serverSentEvents(ctx: Context, connection: HubConnection, action: string, messageId: string | undefined): void;
  /** A WebSocket upgrade of `/signalr/connect` or `/reconnect`: true when it took the socket. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Closes every socket (shutdown). */
  close(): void;
}

export function pushedTransports(needs: PushedNeeds): PushedTransports {
  const { services, timings } = needs;
  const { options, logger } = services;
  const sockets = new WebSocketServer({ noServer: true, maxPayload: MAX_INCOMING_BYTES });

  /** Serves a connection over a pushed transport until it closes: init or replay, then each answer. */
  async function servePushed(
    connection: HubConnection,
    transport: TransportName,
    sink: Sink,
    closed: Closed,
    action: string,
    messageId: string | undefined,
  ): Promise<void> {
    connection.detach?.();
    connection.keep();
    connection.transport = transport;
    const detach = () => sink.close();
    connection.detach = detach;
    const keepAlive = setInterval(() => sink.send('{}'), timings.keepAliveS * 1000);
    try {
      if (action === 'connect') {
        await connection.feed.openMessages();
        sink.send(JSON.stringify(persistentResponse(connection.currentCursor, [], true)));
      } else {
        const replay = connection.replayAfter(messageId);
        if (replay) sink.send(JSON.stringify(replay));
        await needs.reconnected(connection);
      }
      // A reader too slow lets the socket's buffer grow: looked at with each write, closed past the limit.
      const write = (text: string) => {
        const sent = sink.send(text);
        if (sink.buffered() > options.signalrSendBufferBytes) {
          logger.warn({ connection: connection.ids.id }, 'SignalR client too slow: connection closed');
          sink.close();
        }
        return sent;
      };
      while (!closed.aborted && !connection.ended) {
        await connection.push(timings.connectionTimeoutS * 1000, closed, write);
      }
    } catch (error) {
      logger.warn({ err: error, connection: connection.ids.id }, 'SignalR connection stopped');
    } finally {
      clearInterval(keepAlive);
      sink.close();
      if (connection.detach === detach) {
        // No other transport took over: the polls the feed left waiting stop before the state may expire.
        connection.detach = undefined;
        await connection.stopPushing();
        if (!connection.ended) needs.expireLater(connection);
      }
    }
  }

  function serverSentEvents(ctx: Context, connection: HubConnection, action: string, messageId: string | undefined) {
    const { res } = ctx;
    ctx.respond = false;
    res.writeHead(200, {
      ...Object.fromEntries(Object.entries(ctx.response.headers).map(([k, v]) => [k, String(v)])),
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache',
      'X-Accel-Buffering': 'no',
    });
    res.write('data: initialized\n\n');
    const closed = new Closed();
    res.on('close', () => closed.fire());
    const sink: Sink = {
      send: (text) => {
        if (res.writableEnded || res.destroyed) return false;
        res.write(`data: ${text}\n\n`);
        return true;
      },
      buffered: () => res.writableLength,
      close: () => {
        if (res.writableLength > options.signalrSendBufferBytes) res.destroy();
        else if (!res.writableEnded) res.end();
      },
    };
    void servePushed(connection, 'serverSentEvents', sink, closed, action, messageId);
  }

  /** Writes an error answer on a socket that asked for an upgrade, and closes it. */
  function refuseUpgrade(socket: Duplex, thrown: unknown): void {
    const { status, body } = errorAnswer(thrown, logger, '', '/signalr');
    const text = JSON.stringify(body);
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  }

  function serveSocket(ws: WebSocket, connection: HubConnection, action: string, messageId: string | undefined): void {
    const closed = new Closed();
    ws.on('close', () => closed.fire());
    ws.on('error', () => closed.fire());
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      const text = Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.concat(data as Buffer[]).toString('utf8');
      void needs.call(connection, text).then(
        (result) => {
          if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(result));
        },
        () => undefined,
      );
    });
    const sink: Sink = {
      send: (text) => {
        if (ws.readyState !== ws.OPEN) return false;
        ws.send(text);
        return true;
      },
      buffered: () => ws.bufferedAmount,
      // A reader too slow would never read the close frame either.
      close: () => {
        if (ws.bufferedAmount > options.signalrSendBufferBytes) ws.terminate();
        else if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close();
      },
    };
    void servePushed(connection, 'webSockets', sink, closed, action, messageId);
  }

  function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const url = new URL(req.url ?? '/', 'http://hub');
    const matched = SIGNALR_PATH.exec(url.pathname);
    const action = matched?.[1].toLowerCase();
    if (action !== 'connect' && action !== 'reconnect') return false;
    const lookup = lookupOf(url.searchParams, req.headers);
    const ip = req.socket.remoteAddress ?? '';
    needs
      .connectionOf(lookup, ip)
      .then(
        (connection) => {
          if (lookup('transport') !== 'webSockets')
            throw hubError('SignalRBadRequest', { problem: 'not the webSockets transport' });
          sockets.handleUpgrade(req, socket, head, (ws) => serveSocket(ws, connection, action, lookup('messageId')));
        },
        (thrown: unknown) => refuseUpgrade(socket, thrown),
      )
      .catch((thrown: unknown) => refuseUpgrade(socket, thrown));
    return true;
  }

  return {
    serverSentEvents,
    upgrade,
    close: () => {
      for (const client of sockets.clients) client.terminate();
    },
  };
}
