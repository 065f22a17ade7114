/**
 * Admits only authenticated callers to an interface (app.ts mounts it before routing and body reading),
 * slowing and then blocking an address that keeps failing.
 */
import type { Context, Middleware } from 'koa';
import { setTimeout as sleep } from 'node:timers/promises';
import { hubError } from '../errors.js';
import { authenticate } from '../hub/access/authentication.js';
import type { InterfaceName } from '../hub/access/caller.js';
import { checkRequestName } from '../hub/access/requestNames.js';
import type { HubServices } from './context.js';
import { authenticationValues } from './request.js';

const MAX_CALLER_NAME_LENGTH = 256;

/** Names go into the log as given, but bounded: a failed request must not be able to write a huge line. */
const loggable = (value: string | undefined) =>
  value === undefined ? undefined : value.length > 128 ? `${value.slice(0, 128)}…` : value;

export function requireCaller(interfaceName: InterfaceName, services: HubServices): Middleware {
  const { logger, authFailures, metrics } = services;
  const refuse = async (ctx: Context): Promise<never> => {
    const { sentinelName, packageName } = authenticationValues(ctx);
    // One warn line per failure, with the address and the names but never the key (fail2ban, operators).
    logger.warn(
      {
        reqId: ctx.state.requestId,
        interfaceName,
        ip: ctx.ip,
        sentinelName: loggable(sentinelName),
        packageName: loggable(packageName),
      },
      'authentication failed',
    );
    metrics.authFailures.inc();
    // The delay slows key guessing, more so for an address that keeps failing; the answer never says
    // which of the three values was wrong.
    const delay = await authFailures.failed(ctx.ip);
    if (delay > 0) await sleep(delay);
    throw hubError('AccessDenied');
  };
  // Not async on success: one promise less on every authenticated request.
  return (ctx, next) => {
    // An address that kept failing is refused before its key is even looked at: otherwise the 429
    // would still tell a guesser which key was right.
    const retryAfter = authFailures.blockedFor(ctx.ip);
    if (retryAfter > 0) {
      ctx.set('Retry-After', String(retryAfter));
      ctx.set('Connection', 'close');
      throw hubError('TooManyAuthFailures', { seconds: retryAfter });
    }
    const caller = authenticate(services.configuration, interfaceName, authenticationValues(ctx));
    if (!caller) return refuse(ctx);
    // A consumer's PackageName is free text that becomes its name in messages and the console.
    checkRequestName('PackageName', caller.packageName, MAX_CALLER_NAME_LENGTH);
    ctx.state.caller = caller;
    return next();
  };
}
