/** What the HTTP layer hands to every router: the hub's services and the request state they share. */
import type { Context } from 'koa';
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Configuration } from '../hub/configuration/configuration.js';
import type { Caller } from '../hub/access/caller.js';
import type { ClientSignal } from '../hub/polls/clientSignal.js';
import type { Messages } from '../hub/messages.js';
import type { Subscriptions } from '../hub/polls/subscriptions.js';
import type { StateObjects } from '../hub/stateObjects.js';
import type { PackageLogs } from '../hub/packages/packageLogs.js';
import type { Descriptors } from '../hub/packages/descriptors.js';
import type { HubOptions } from '../settings.js';
import type { ConfigurationFileActions } from '../hub/configuration/configurationFileActions.js';
import type { Credentials } from '../hub/configuration/credentials.js';
import type { HubLicense } from '../hub/configuration/license.js';
import type { PackageInstances } from '../hub/packages/packageInstances.js';
import type { Sentinels } from '../hub/configuration/sentinels.js';
import type { AuthFailureThrottle } from '../hub/access/authFailureThrottle.js';
import type { HubMetrics } from '../metrics.js';
import type { DetachableState } from './detached.js';
import type { Repository } from '../hub/packages/repository.js';
import type { Overview } from '../hub/overview.js';
import type { ProcessRegistry } from '../hub/processRegistry.js';

/** What the management interface changes in the configuration, and the license. */
export interface ManagementServices {
  configurationFile: ConfigurationFileActions;
  sentinels: Sentinels;
  instances: PackageInstances;
  credentials: Credentials;
  license: HubLicense;
}

export interface HubServices {
  options: HubOptions;
  logger: Logger;
  configuration: Configuration;
  stateObjects: StateObjects;
  messages: Messages;
  /** Both kinds' subscriptions as such: a SignalR connection's end deletes its own (src/hub/polls/subscriptions.ts). */
  subscriptions: Subscriptions;
  packageLogs: PackageLogs;
  descriptors: Descriptors;
  management: ManagementServices;
  version: string;
  metrics: HubMetrics;
  repository: Repository;
  authFailures: AuthFailureThrottle;
  /** What the console's overview shows (src/hub/overview.ts). */
  overview: Overview;
  /** The hub processes sharing the store (src/hub/processRegistry.ts). */
  processes: ProcessRegistry;
}

/** The request's state; what a long-poll answered outside Koa uses of it is in detached.ts. */
export interface HubState extends DetachableState {
  caller: Caller;
  /** The query string's parameters by lower-cased name, parsed on first use (request.ts). */
  query?: Map<string, string>;
}

const SIGNAL = Symbol('clientGone');

/**
 * Aborted when the client goes away before its response is written. What a long-poll needs of an
 * AbortSignal (`aborted`, 'abort' listeners) without an EventTarget per request: a waiting poll holds
 * this small object and one shared 'close' listener on its response. Its one listener (the waiter)
 * lives in a field; the rare further ones in an array made only for them, so several listeners work as
 * on an AbortSignal (each once, in the order added; the same one twice is one) at no cost per poll.
 * It also tells how the response ended (`whenAnswered`: a 200 written whole, or not).
 */
class ClientGoneSignal implements ClientSignal {
  aborted = false;
  /** How the response ended (undefined: not yet), and who wants to know (one poll's delivery). */
  private sent: boolean | undefined = undefined;
  private answered: ((sent: boolean) => void) | undefined = undefined;
  private listener: EventListenerObject | undefined = undefined;
  /** Listeners after the first, in the order added; only ever empty when `listener` is too. */
  private more: EventListenerObject[] | undefined = undefined;

  addEventListener(_type: 'abort', listener: EventListenerObject): void {
    // As on an AbortSignal, a listener added once it has fired is never called.
    if (this.aborted || listener === this.listener || this.more?.includes(listener)) return;
    if (this.listener === undefined) this.listener = listener;
    else (this.more ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: EventListenerObject): void {
    if (this.listener === listener) {
      this.listener = this.more?.shift();
    } else if (this.more) {
      const at = this.more.indexOf(listener);
      if (at >= 0) this.more.splice(at, 1);
    }
    if (this.more?.length === 0) this.more = undefined;
  }

  whenAnswered(listener: (sent: boolean) => void): void {
    if (this.sent === undefined) this.answered = listener;
    else listener(this.sent);
  }

  /** The response closed: written whole with a 200, or not. */
  ended(sent: boolean): void {
    if (this.sent !== undefined) return;
    this.sent = sent;
    const answered = this.answered;
    this.answered = undefined;
    answered?.(sent);
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listener = this.listener;
    const more = this.more;
    this.listener = undefined;
    this.more = undefined;
    if (!listener) return;
    const event = new Event('abort');
    listener.handleEvent(event);
    if (more) for (const each of more) each.handleEvent(event);
  }
}

/** Shared by every response: Node calls it with the response as `this`. */
function onResponseClose(this: ServerResponse & { [SIGNAL]?: ClientGoneSignal }): void {
  const signal = this[SIGNAL];
  if (!signal) return;
  if (!this.writableFinished) signal.abort();
  signal.ended(this.writableFinished && this.statusCode === 200);
}

/** Aborted when the client goes away before its response is written (long-polls stop waiting). */
export function clientGone(ctx: Context): ClientSignal {
  const signal = new ClientGoneSignal();
  const res = ctx.res as ServerResponse & { [SIGNAL]?: ClientGoneSignal };
  res[SIGNAL] = signal;
  res.on('close', onResponseClose);
  if (ctx.req.socket.destroyed) {
    signal.abort();
    signal.ended(false);
  }
  return signal;
}

/** A subscription id goes out as a JSON string: 38 bytes for a GUID, no newline (firmware checks). */
export function sendSubscriptionId(ctx: Context, id: string): void {
  ctx.status = 200;
  ctx.type = 'application/json; charset=utf-8';
  ctx.body = JSON.stringify(id);
}

/** Vary as the one header a 204 adds to those set before (app.ts's front leaves it to the answer). */
const VARY_ORIGIN = ['Vary', 'Origin'];

/**
 * 204, written here rather than by Koa's respond (which would clear a body there is none of, header by
 * header): the push's answer, the hot path's most frequent. The status stays on the context for the
 * request metrics.
 */
export function noContent(ctx: Context): void {
  ctx.status = 204;
  if (!ctx.writable) return;
  ctx.respond = false;
  ctx.res.writeHead(204, (ctx.state as HubState).varyOrigin ? VARY_ORIGIN : []);
  ctx.res.end();
}
