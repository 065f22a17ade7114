/** The consumer interface: any enabled credential, `SentinelName=Consumer`. */
import Router from '@koa/router';
import { authenticateAs } from './authenticate.js';
import type { HubServices, HubState } from './context.js';
import { registerSharedActions } from './sharedActions.js';

export function consumerRouter(services: HubServices): Router<HubState> {
  const router = new Router<HubState>({ prefix: '/rest/consumer' });
  router.use(authenticateAs('consumer', services));
  registerSharedActions(router, services);
  return router;
}
