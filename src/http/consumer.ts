/** The consumer interface: any enabled credential, `SentinelName=Consumer` (authenticated in app.ts). */
import Router from '@koa/router';
import type { HubServices, HubState } from './context.js';
import { registerSharedActions } from './sharedActions.js';

export function consumerRouter(services: HubServices): Router<HubState> {
  const router = new Router<HubState>({ prefix: '/rest/consumer' });
  registerSharedActions(router, services);
  return router;
}
