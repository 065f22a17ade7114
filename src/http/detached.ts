/**
 * Long-polls answered outside Koa: a poll handler parses its parameters in the chain, then hands the
 * poll's promise to `answerLater`, and the chain returns at once, so a waiting poll holds only its own
 * state. When the poll settles it is answered here with what Koa would have sent (the chain's headers,
 * Vary, then 200 with the JSON body or the hub's JSON error); the metrics count it then.
 */
import type { Context } from 'koa';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { errorAnswer } from './errorMapping.js';

/** Told of a detached answer once it is written: its status, and what the request metrics kept for it. */
export type AnswerListener = (status: number, startedAt: number, route: string | undefined) => void;

/**
 * What the chain left for a detached answer: the request metrics (app.ts) wait for its status. A plain
 * object rather than a promise: a waiting poll then holds one fewer promise and its reaction; and the
 * metrics' figures (start, route) in its fields with one listener shared by every poll, rather than a
 * closure and its context per poll.
 */
export class DetachedAnswer {
  private status: number | undefined = undefined;
  private listener: AnswerListener | undefined = undefined;
  private startedAt = 0;
  private route: string | undefined = undefined;

  /** Calls `listener` with the status, `startedAt` and `route` once the answer is written (at once if it already was). */
  whenAnswered(listener: AnswerListener, startedAt = 0, route?: string): void {
    if (this.status !== undefined) return listener(this.status, startedAt, route);
    this.listener = listener;
    this.startedAt = startedAt;
    this.route = route;
  }

  answered(status: number): void {
    this.status = status;
    const listener = this.listener;
    this.listener = undefined;
    listener?.(status, this.startedAt, this.route);
  }
}

/** What answerLater reads and sets of a request's state (context.ts's HubState is one). */
export interface DetachableState {
  requestId: string;
  /** Dropped once detached: nothing the waiter needs. */
  query?: unknown;
  /** Set when a long-poll is answered outside Koa: tells the status it sent. */
  detached?: DetachedAnswer;
  /** `Vary: Origin` is still to be set (every request without Origin, app.ts): whoever writes the answer sets it. */
  varyOrigin?: boolean;
}

const JSON_TYPE = 'application/json; charset=utf-8';

function writeJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  varyOrigin: boolean,
  headers?: Record<string, string>,
): number {
  // The client left: the poll consumed nothing for it (take runs with the abort signal); nothing to write.
  if (res.headersSent || res.destroyed) return status;
  const text = JSON.stringify(value);
  // One flat list handed to writeHead: without headers set earlier (CORS, Connection), Node writes it
  // as it is, with no header object built and no setHeader's checks per name (a fan-out writes 1,000).
  const list: (string | number)[] = [];
  // First, where the chain would have put it (app.ts leaves it to the answer, so the wait holds no header object).
  if (varyOrigin) list.push('Vary', 'Origin');
  if (headers) for (const name in headers) list.push(name, headers[name]);
  list.push('Content-Type', JSON_TYPE, 'Content-Length', Buffer.byteLength(text));
  res.writeHead(status, list as unknown as string[]);
  res.end(text);
  return status;
}

/**
 * Koa registers `ctx.onerror` with on-finished for every response, which keeps the whole context
 * (ctx, request, response, state, router captures: ~2 KB) reachable until the response ends. A detached
 * response is no longer Koa's to finish: its listener is dropped (on-finished keeps its queue on the
 * response; should that ever change, this does nothing and the context merely stays alive).
 */
function forgetKoa(res: ServerResponse): void {
  const listener = (res as unknown as { __onFinished?: { queue?: unknown[] | null } }).__onFinished;
  if (Array.isArray(listener?.queue)) listener.queue.length = 0;
}

/** The routes whose requests may be detached (sharedActions.ts): GetStateObjects and GetMessages. */
const POLL_PATH = /^\/+rest\/+(?:consumer|platform|constellation)\/+get(?:stateobjects|messages)\/*(?:\?|$)/i;

/** A request target (or Koa path) of a route whose requests may be detached. */
const isPollPath = (target: string): boolean => POLL_PATH.test(target);

/**
 * What on-finished finds on a response it already watches: it then only adds its listener to `queue`.
 * This queue drops it: Koa's error listener is not needed for a poll's JSON answer (a socket error
 * on it has nothing left to report), and a detached poll would otherwise keep it for the whole wait.
 */
const NOT_WATCHED = Object.assign(() => undefined, { queue: { push: () => 0 } });

/**
 * Koa asks on-finished to watch every response (Application.handleRequest), which costs a poll about
 * 1.5 KB while it waits: listeners on the response and on the socket and their contexts, which stay
 * until the response ends even once forgetKoa emptied the queue. A poll route's response is marked as
 * watched before Koa sees it (call this with the request target), so none of that is created. Should
 * on-finished stop looking at `__onFinished`, this does nothing and only the memory returns.
 */
export function markDetachable(target: string, res: ServerResponse): void {
  if (isPollPath(target)) (res as unknown as { __onFinished?: unknown }).__onFinished = NOT_WATCHED;
}

/**
 * Test-only (test/inFlight.test.ts): with HUB_TEST_DIE_BEFORE_ANSWER=1 the process kills itself after a
 * poll's take committed and before its answer is written, as a crash there would.
 */
const DIE_BEFORE_ANSWER = process.env.HUB_TEST_DIE_BEFORE_ANSWER === '1';

/** Answers the request with `result`'s value (200, JSON) or error once it settles, outside Koa's chain. */
export function answerLater(ctx: Context, result: Promise<unknown>, logger: Logger): void {
  const state = ctx.state as DetachableState;
  const { res, req } = ctx;
  const { requestId } = state;
  const { path } = ctx;
  ctx.respond = false;
  // Stands in for the answer to come, so the chain sees a handled request (not an unknown path's 404).
  ctx.status = 200;
  forgetKoa(res);
  // Nothing the waiter needs: the parsed query would otherwise stay reachable for the whole wait.
  state.query = undefined;
  // Caches Koa filled while routing, recomputed should anything read them again: the header object
  // (Node keeps `rawHeaders`) and parseurl's parsed URL (`req.url` stays).
  req.headers = null as unknown as IncomingMessage['headers'];
  (req as { _parsedUrl?: unknown })._parsedUrl = undefined;
  const answer = (state.detached = new DetachedAnswer());
  const varyOrigin = state.varyOrigin === true;
  result.then(
    // Undefined (the client left, nothing consumed) is answered as the Koa path did: an empty array.
    (value) => {
      if (DIE_BEFORE_ANSWER && Array.isArray(value) && value.length > 0) process.kill(process.pid, 'SIGKILL');
      answer.answered(writeJson(res, 200, value ?? [], varyOrigin));
    },
    (thrown: unknown) => {
      const { status, body, headers } = errorAnswer(thrown, logger, requestId, path);
      answer.answered(writeJson(res, status, body, varyOrigin, headers));
    },
  );
}
