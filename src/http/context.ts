/** What the HTTP layer hands to every router: the hub's services and the request state they share. */
import type { Context } from 'koa';
import type { Logger } from 'pino';
import type { Configuration } from '../hub/configuration.js';
import type { Caller } from '../hub/caller.js';
import type { Messages } from '../hub/messages.js';
import type { StateObjects } from '../hub/stateObjects.js';
import type { PackageLogs } from '../hub/packageLogs.js';
import type { Descriptors } from '../hub/descriptors.js';
import type { HubOptions } from '../settings.js';
import type { Management } from '../hub/management.js';
import type { AuthFailureThrottle } from '../hub/authFailureThrottle.js';
import type { HubMetrics } from '../metrics.js';
import type { Repository } from '../hub/repository.js';
import type { Overview } from '../hub/overview.js';

export interface HubServices {
  options: HubOptions;
  logger: Logger;
  configuration: Configuration;
  stateObjects: StateObjects;
  messages: Messages;
  packageLogs: PackageLogs;
  descriptors: Descriptors;
  management: Management;
  version: string;
  metrics: HubMetrics;
  repository: Repository;
  authFailures: AuthFailureThrottle;
  /** What the console's overview shows (src/hub/overview.ts). */
  overview: Overview;
}

export interface HubState {
  requestId: string;
  caller: Caller;
  /** The query string's parameters by lower-cased name, parsed on first use (request.ts). */
  query?: Map<string, string>;
  /** Set when a long-poll is answered outside Koa (detached.ts): resolves with the status it sent. */
  answered?: Promise<number>;
}

/** Aborted when the client goes away before its response is written (long-polls stop waiting). */
export function clientGone(ctx: Context): AbortSignal {
  const controller = new AbortController();
  // Holds the response only, not the context: the listener lives as long as the poll waits.
  const { res } = ctx;
  const onClose = () => {
    if (!res.writableFinished) controller.abort();
  };
  res.once('close', onClose);
  if (ctx.req.socket.destroyed) controller.abort();
  return controller.signal;
}

/** A subscription id goes out as a JSON string: 38 bytes for a GUID, no newline (firmware checks). */
export function sendSubscriptionId(ctx: Context, id: string): void {
  ctx.status = 200;
  ctx.type = 'application/json; charset=utf-8';
  ctx.body = JSON.stringify(id);
}

/** 204: Koa strips the body and its headers when it responds. */
export function noContent(ctx: Context): void {
  ctx.status = 204;
}
