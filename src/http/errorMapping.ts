/**
 * The one place where errors become responses: the status of every code of the catalogue (errors.ts)
 * and the wire body `{Message, MessageDetail, Code}`. Anything else thrown becomes a logged 500.
 */
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { type ErrorCode, HubError, hubError } from '../errors.js';
import { ConfigurationError } from '../config/validate.js';
import { lingerAfterAnswer } from './lingeringClose.js';

export const ERROR_STATUS = {
  MissingParameter: 400,
  InvalidParameter: 400,
  InvalidName: 400,
  InvalidSubscriptionId: 400,
  MissingScope: 400,
  InvalidScope: 400,
  MissingScopeArgs: 400,
  MissingMessageKey: 400,
  MissingBody: 400,
  UnsupportedContentType: 400,
  MalformedJson: 400,
  InvalidBody: 400,
  UnreadableBody: 400,
  MalformedRequest: 400,
  InvalidConfiguration: 400,
  MissingConfiguration: 400,
  MissingPackageFile: 400,
  InvalidPackage: 400,
  DuplicatePackage: 400,
  InvalidUrl: 400,
  UnsupportedUrlScheme: 400,
  DownloadFailed: 400,
  TooManyRedirects: 400,
  DownloadInterrupted: 400,
  AccessDenied: 403,
  MessageNotAuthorized: 403,
  GroupNotAuthorized: 403,
  NotFound: 404,
  NoInterface: 404,
  SentinelNotFound: 404,
  PackageInstanceNotFound: 404,
  CredentialNotFound: 404,
  DescriptorNotFound: 404,
  ConfigurationFileNotFound: 404,
  PackageNotFound: 404,
  IconNotFound: 404,
  XsdNotFound: 404,
  MethodNotAllowed: 405,
  BodyTimeout: 408,
  HeadersTimeout: 408,
  PackageNameTaken: 409,
  CredentialInUse: 409,
  LastManagementCredential: 409,
  LicenseLimit: 409,
  ConfigurationFilePending: 409,
  ConfigurationPending: 409,
  BodyTooLarge: 413,
  PackageTooLarge: 413,
  ValueTooLarge: 414,
  UnsupportedContentEncoding: 415,
  TooManySubscriptions: 429,
  TooManyPolls: 429,
  TooManyAuthFailures: 429,
  HeadersTooLarge: 431,
  // Firmware treats exactly 500 on a poll as "subscription lost" and re-subscribes (wire.md).
  SubscriptionNotFound: 500,
  InternalError: 500,
  SignalRUnknownHub: 400,
  SignalRHubNotAllowed: 403,
  SignalRBadRequest: 400,
  SignalRUnknownConnection: 400,
  SignalRTooManyConnections: 429,
  DatabaseBusy: 503,
  ConsoleNotBuilt: 503,
} as const satisfies Record<ErrorCode, number>;

export interface ErrorBody {
  Message: string;
  MessageDetail?: string;
  /** ASP.NET's field for an exception's text: Constellation's Console shows it (refused configurations). */
  ExceptionMessage?: string;
  /** The catalogue's code: what clients compare, never the message. */
  Code: ErrorCode;
}

/** What an error becomes on the wire: status, body and the headers that go with it. */
export interface ErrorAnswer {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
}

/** The answer to a HubError, also for code that writes to a socket itself (no Koa context). */
export function answerOf(error: HubError): ErrorAnswer {
  const status = ERROR_STATUS[error.code];
  const body: ErrorBody = {
    Message: error.message,
    ...(error.detail ? { MessageDetail: error.detail } : {}),
    // Constellation's Console and scripts show a refused configuration's reason from ASP.NET's field.
    ...(error.code === 'InvalidConfiguration' && error.detail ? { ExceptionMessage: error.detail } : {}),
    Code: error.code,
  };
  const headers: Record<string, string> = {};
  // 413, 408 and 415 leave the body unread (or half read): the connection cannot carry another request.
  if (status === 413 || status === 408 || status === 415) headers.Connection = 'close';
  if (status === 503) headers['Retry-After'] = '1';
  return { status, body, headers };
}

/** Errors from koa-body / co-body / formidable and http-errors carry a 4xx status and a safe message. */
function fromBodyReader(error: unknown): HubError | undefined {
  // formidable (multipart uploads) says `httpCode`.
  const e = error as { status?: unknown; statusCode?: unknown; httpCode?: unknown; message?: unknown };
  const status = [e?.status, e?.statusCode, e?.httpCode].find((s): s is number => typeof s === 'number');
  if (status === undefined || status < 400 || status >= 500) return undefined;
  return status === 413
    ? hubError('BodyTooLarge')
    : hubError('UnreadableBody', typeof e.message === 'string' ? e.message : undefined);
}

/** Maps anything thrown while answering a request (in Koa's chain or after a long-poll left it, detached.ts). */
export function errorAnswer(thrown: unknown, logger: Logger, requestId: string, path: string): ErrorAnswer {
  let error: HubError;
  if (thrown instanceof HubError) {
    error = thrown;
    if (error.code === 'DatabaseBusy') logger.warn({ reqId: requestId }, error.message);
    else if (ERROR_STATUS[error.code] >= 500 && error.code !== 'SubscriptionNotFound')
      logger.error({ err: error, reqId: requestId }, error.message);
  } else if (thrown instanceof ConfigurationError) {
    error = hubError('InvalidConfiguration', thrown.message);
  } else {
    const refused = fromBodyReader(thrown);
    if (refused) error = refused;
    else {
      error = hubError('InternalError', `See the hub's log for request ${String(requestId)}.`);
      logger.error({ err: thrown, reqId: requestId, path }, 'request failed');
    }
  }
  return answerOf(error);
}

/** Answers what Koa's chain threw (app.ts), as errorAnswer maps it. */
export function answerError(ctx: Context, thrown: unknown, logger: Logger): void {
  const answer = errorAnswer(thrown, logger, ctx.state.requestId as string, ctx.path);
  ctx.status = answer.status;
  ctx.body = answer.body;
  for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
  // A refusal that closes the connection before its body was read reads the rest first (lingeringClose.ts).
  if (ctx.response.get('Connection') === 'close') lingerAfterAnswer(ctx.req);
}
