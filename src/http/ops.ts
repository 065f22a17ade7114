/** The operational endpoints outside the interfaces: /health, /ready, /metrics and /openapi.json. */
import Router from '@koa/router';
import { hubError } from '../errors.js';
import { authenticate } from '../hub/authentication.js';
import type { HubServices, HubState } from './context.js';
import { openApiDocument } from './openapi.js';
import { authenticationValues } from './request.js';

export interface Readiness {
  ready: boolean;
}

export function opsRouter(services: HubServices, readiness: Readiness): Router<HubState> {
  const router = new Router<HubState>();
  const { metrics } = services;
  let openApi: string | undefined;

  router.get('/health', (ctx) => {
    ctx.body = { Status: 'ok' };
  });
  router.get('/ready', (ctx) => {
    ctx.status = readiness.ready ? 200 : 503;
    ctx.body = { Status: readiness.ready ? 'ready' : 'not ready' };
  });
  // Open to scrapers only with HUB_METRICS_OPEN; otherwise the management interface's authentication.
  router.get('/metrics', async (ctx) => {
    if (
      !services.options.metricsOpen &&
      !authenticate(services.configuration, 'management', authenticationValues(ctx))
    ) {
      throw hubError('AccessDenied');
    }
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
  router.get('/openapi.json', (ctx) => {
    openApi ??= JSON.stringify(openApiDocument(services.version), null, 1);
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = openApi;
  });
  return router;
}
