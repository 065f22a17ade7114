/**
 * Long-polls answered outside Koa. A poll may wait two minutes; while it waits, Koa's middleware chain,
 * the handler and their promises would stay suspended (about two thirds of a waiting poll's memory,
 * docs/benchmarks.md). So a poll handler parses its parameters in the chain (bad input is answered
 * there), then hands the poll's promise to `answerLater`: Koa stops responding for this request, the
 * chain returns at once, and only the poll's own waiting state plus one small closure stays alive.
 * When the poll settles it is answered here with what Koa would have sent: the headers already set by
 * the chain (Vary, CORS, Connection) stay on the response, then 200 with the JSON body, or the hub's
 * JSON error (errorAnswer). The metrics middleware counts the request when `answered` resolves.
 */
import type { Context } from 'koa';
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { HubState } from './context.js';
import { errorAnswer } from './errorMapping.js';

function writeJson(res: ServerResponse, status: number, value: unknown, headers?: Record<string, string>): number {
  // The client left: the poll consumed nothing for it (take runs with the abort signal); nothing to write.
  if (res.headersSent || res.destroyed) return status;
  const text = JSON.stringify(value);
  res.statusCode = status;
  if (headers) for (const name in headers) res.setHeader(name, headers[name]);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
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

/** Answers the request with `result`'s value (200, JSON) or error once it settles, outside Koa's chain. */
export function answerLater(ctx: Context, result: Promise<unknown>, logger: Logger): void {
  const state = ctx.state as HubState;
  const { res } = ctx;
  const { requestId } = state;
  const { path } = ctx;
  ctx.respond = false;
  // Stands in for the answer to come, so the chain sees a handled request (not an unknown path's 404).
  ctx.status = 200;
  forgetKoa(res);
  // Nothing the waiter needs: the parsed query would otherwise stay reachable for the whole wait.
  state.query = undefined;
  state.answered = result.then(
    // Undefined (the client left, nothing consumed) is answered as the Koa path did: an empty array.
    (value) => writeJson(res, 200, value ?? []),
    (thrown: unknown) => {
      const answer = errorAnswer(thrown, logger, requestId, path);
      return writeJson(res, answer.status, answer.body, answer.headers);
    },
  );
}
