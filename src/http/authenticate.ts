/** Router middleware: only authenticated callers reach an interface's actions. */
import type { Middleware } from 'koa';
import { setTimeout as sleep } from 'node:timers/promises';
import { forbidden } from '../errors.js';
import { authenticate } from '../hub/authentication.js';
import type { InterfaceName } from '../hub/caller.js';
import type { HubServices } from './context.js';
import { authenticationValues } from './request.js';

export function authenticateAs(interfaceName: InterfaceName, services: HubServices): Middleware {
  return async (ctx, next) => {
    const caller = authenticate(services.configuration, interfaceName, authenticationValues(ctx));
    if (!caller) {
      services.logger.debug({ reqId: ctx.state.requestId, interfaceName, ip: ctx.ip }, 'authentication failed');
      services.metrics.authFailures.inc();
      // The delay slows key guessing, more so for an address that keeps failing; the answer never says
      // which of the three values was wrong.
      const delay = services.authFailures.failed(ctx.ip);
      if (delay > 0) await sleep(delay);
      throw forbidden();
    }
    ctx.state.caller = caller;
    await next();
  };
}
