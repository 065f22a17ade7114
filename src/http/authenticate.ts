/** Interface middleware (app.ts mounts it before routing and body reading): only authenticated callers reach an interface's actions. */
import type { Context, Middleware } from 'koa';
import { setTimeout as sleep } from 'node:timers/promises';
import { forbidden } from '../errors.js';
import { authenticate } from '../hub/authentication.js';
import type { InterfaceName } from '../hub/caller.js';
import type { HubServices } from './context.js';
import { authenticationValues } from './request.js';

export function authenticateAs(interfaceName: InterfaceName, services: HubServices): Middleware {
  const refuse = async (ctx: Context): Promise<never> => {
    services.logger.debug({ reqId: ctx.state.requestId, interfaceName, ip: ctx.ip }, 'authentication failed');
    services.metrics.authFailures.inc();
    // The delay slows key guessing, more so for an address that keeps failing; the answer never says
    // which of the three values was wrong.
    const delay = services.authFailures.failed(ctx.ip);
    if (delay > 0) await sleep(delay);
    throw forbidden();
  };
  // Not async on success: one promise less on every authenticated request.
  return (ctx, next) => {
    const caller = authenticate(services.configuration, interfaceName, authenticationValues(ctx));
    if (!caller) return refuse(ctx);
    ctx.state.caller = caller;
    return next();
  };
}
