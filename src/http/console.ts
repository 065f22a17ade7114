/**
 * Everything the web console needs from the server, mounted by one line in app.ts before the interface
 * routers: the built page (consoleAssets.ts), `/openapi.json`, and the management endpoints that give
 * the console in one call what the interfaces do not (documented in docs/api.md).
 */
import Router from '@koa/router';
import type { Middleware } from 'koa';
import compose from 'koa-compose';
import { serializeConfiguration } from '../config/xmlFile.js';
import { authenticateAs } from './authenticate.js';
import { consoleAssets } from './consoleAssets.js';
import type { HubServices, HubState } from './context.js';
import { openApiDocument } from './openapi.js';

const CONSOLE_ENDPOINTS = /^\/rest\/management\/(overview|descriptors|server\/status|configuration\/applied)\/?$/i;

interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
}

function consoleApi(services: HubServices): Router<HubState> {
  const router = new Router<HubState>({ prefix: '/rest/management' });
  const { overview, metrics, management } = services;

  router.get('/overview', async (ctx) => {
    ctx.body = { Sentinels: await overview.sentinels() };
  });
  router.get('/descriptors', async (ctx) => {
    ctx.body = await overview.descriptors();
  });
  // The configuration in force, written as the hub writes the file: the console diffs an edit against it.
  router.get('/configuration/applied', (ctx) => {
    ctx.type = 'application/xml; charset=utf-8';
    ctx.body = serializeConfiguration(services.configuration.current);
  });
  router.get('/server/status', async (ctx) => {
    const values = new Map<string, MetricValue[]>();
    for (const metric of await metrics.registry.getMetricsAsJSON()) values.set(metric.name, metric.values as MetricValue[]);
    const sum = (name: string, where: (v: MetricValue) => boolean = () => true) =>
      (values.get(name) ?? []).filter(where).reduce((total, v) => total + v.value, 0);
    const now = Date.now();
    ctx.body = {
      Version: services.version,
      StartedAt: new Date(overview.startedAt).toISOString(),
      UptimeSeconds: Math.floor((now - overview.startedAt) / 1000),
      Now: new Date(now).toISOString(),
      WaitingLongPolls: sum('hub_waiting_long_polls'),
      RequestsTotal: sum('hub_http_requests_total'),
      AuthFailures: sum('hub_auth_failures_total'),
      StateObjects: sum('hub_state_objects'),
      QueuedMessages: sum('hub_queued_messages'),
      DroppedMessages: sum('hub_dropped_messages_total'),
      MessageSubscriptions: sum('hub_subscriptions', (v) => v.labels.kind === 'messages'),
      StateObjectSubscriptions: sum('hub_subscriptions', (v) => v.labels.kind === 'state_objects'),
      License: await management.license.record(),
    };
  });
  return router;
}

export function consoleRoutes(services: HubServices): Middleware<HubState> {
  const assets = consoleAssets();
  let openApi: string | undefined;
  const api = consoleApi(services);
  const authenticated = compose([authenticateAs('management', services), api.routes()] as unknown as Middleware<HubState>[]);
  return (ctx, next) => {
    if (ctx.path === '/openapi.json' && ctx.method === 'GET') {
      openApi ??= JSON.stringify(openApiDocument(services.version), null, 1);
      ctx.type = 'application/json; charset=utf-8';
      ctx.body = openApi;
      return;
    }
    if (ctx.method === 'GET' && CONSOLE_ENDPOINTS.test(ctx.path)) return authenticated(ctx, next);
    return assets(ctx, next);
  };
}
