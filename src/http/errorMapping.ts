/** The one place where errors become responses: `{Message, MessageDetail}` with the right status. */
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { databaseBusy, HubError } from '../errors.js';
import { isDatabaseBusy } from '../errors.js';
import { ConfigurationError } from '../config/validate.js';

export interface ErrorBody {
  Message: string;
  MessageDetail?: string;
  /** ASP.NET's field for an exception's text: Constellation's Console shows it (refused configurations). */
  ExceptionMessage?: string;
}

/** Errors from koa-body / co-body and http-errors carry a 4xx status and a safe message. */
function clientStatus(error: unknown): number | undefined {
  // formidable (multipart uploads) says `httpCode`.
  const e = error as { status?: unknown; statusCode?: unknown; httpCode?: unknown };
  const status = [e?.status, e?.statusCode, e?.httpCode].find((s): s is number => typeof s === 'number');
  return status !== undefined && status >= 400 && status < 500 ? status : undefined;
}

/** What an error becomes on the wire: status, `{Message, MessageDetail}` and the headers that go with it. */
export interface ErrorAnswer {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
}

/** Maps anything thrown while answering a request (in Koa's chain or after a long-poll left it, detached.ts). */
export function errorAnswer(thrown: unknown, logger: Logger, requestId: string, path: string): ErrorAnswer {
  let status: number;
  let body: ErrorBody;
  // SQLITE_BUSY reaches here from writes outside the group commit (which waits longer by itself).
  const error = isDatabaseBusy(thrown) ? databaseBusy() : thrown;
  const fromClient = clientStatus(error);
  if (error instanceof HubError) {
    status = error.status;
    body = { Message: error.message, ...(error.detail ? { MessageDetail: error.detail } : {}) };
    if (error.code === 'DatabaseBusy') logger.warn({ reqId: requestId }, error.message);
    else if (status >= 500 && error.code !== 'SubscriptionNotFound') logger.error({ err: error, reqId: requestId }, error.message);
  } else if (error instanceof ConfigurationError) {
    status = 400;
    body = { Message: 'The configuration is not valid.', MessageDetail: error.message, ExceptionMessage: error.message };
  } else if (fromClient !== undefined) {
    status = fromClient;
    const message = status === 413 ? 'The request body is too large.' : (error as Error).message;
    body = { Message: message };
  } else {
    status = 500;
    body = { Message: 'An error has occurred.', MessageDetail: `See the hub's log for request ${String(requestId)}.` };
    logger.error({ err: error, reqId: requestId, path }, 'request failed');
  }
  const headers: Record<string, string> = {};
  // Errors must not leave a half-parsed request body on a keep-alive connection.
  // 413, 408 and 415 leave the body unread (or half read): the connection cannot carry another request.
  if (status === 413 || status === 408 || status === 415) headers.Connection = 'close';
  if (status === 503) headers['Retry-After'] = '1';
  return { status, body, headers };
}

export function errorMapping(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (thrown) {
      const answer = errorAnswer(thrown, logger, ctx.state.requestId as string, ctx.path);
      ctx.status = answer.status;
      ctx.body = answer.body;
      for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
    }
  };
}
