/** The operational endpoints outside the interfaces: /health, /ready, /metrics and /openapi.json. */
import Router from '@koa/router';
import { hubError } from '../errors.js';
import { authenticate } from '../hub/access/authentication.js';
import type { HubServices, HubState } from './context.js';
import { openApiDocument } from './openapi.js';
import { authenticationValues } from './request.js';

export interface Readiness {
  /** Serving (between the start and the stop): app.ts closes kept-alive connections otherwise. */
  readonly ready: boolean;
  /** Serving and the store answering (hub/readiness.ts). */
  check(): Promise<{ ready: boolean; reason?: string }>;
}

export function opsRouter(services: HubServices, readiness: Readiness): Router<HubState> {
  const router = new Router<HubState>();
  const { metrics } = services;
  let openApi: string | undefined;

  router.get('/health', (ctx) => {
    ctx.body = { Status: 'ok' };
  });
  // 503 with the reason (starting, stopping, database unreachable) for load balancers and orchestrators.
  router.get('/ready', async (ctx) => {
    const { ready, reason } = await readiness.check();
    ctx.set('Cache-Control', 'no-store');
    ctx.status = ready ? 200 : 503;
    ctx.body = ready ? { Status: 'ready' } : { Status: 'not ready', Reason: reason };
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
