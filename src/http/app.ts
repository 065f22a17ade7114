/** The Koa application: middleware order, the interface routers, and the answers for unknown paths. */
import cors from '@koa/cors';
import Router from '@koa/router';
import Koa from 'koa';
import compose from 'koa-compose';
import { randomUUID } from 'node:crypto';
import { forbidden, HubError, notFound } from '../errors.js';
import { authenticate } from '../hub/authentication.js';
import type { InterfaceName } from '../hub/caller.js';
import { authenticateAs } from './authenticate.js';
import { bodyReader } from './bodyReading.js';
import { authenticationValues } from './request.js';
import { consumerRouter } from './consumer.js';
import type { HubServices, HubState } from './context.js';
import { errorMapping } from './errorMapping.js';
import { isPollPath } from './detached.js';
import { managementRouter } from './management.js';
import { platformRouter } from './platform.js';
import { consoleRoutes } from './console.js';

export interface Readiness {
  ready: boolean;
}

const INTERFACES = /^\/rest\/(consumer|platform|constellation|management)\/(.*)$/i;

/** Unknown action (wire.md): 404 with the Message/MessageDetail pair firmware and consoles expect. */
function unknownPath(path: string): HubError {
  const match = INTERFACES.exec(path);
  if (!match) return notFound(`No HTTP resource was found that matches the request URI '${path}'.`);
  const interfaceName = match[1].toLowerCase() === 'constellation' ? 'platform' : match[1].toLowerCase();
  return notFound(
    `No HTTP resource was found that matches the request URI '${path}'.`,
    `No action was found on the ${interfaceName} interface that matches the name '${match[2]}'.`,
  );
}

/** Metrics for one (route, status): labelled children resolved once, off prom-client's hashing path. */
interface RouteCounter {
  count(): void;
  time(seconds: number): void;
}

export function createApp(services: HubServices, readiness: Readiness): Koa<HubState> {
  const app = new Koa<HubState>();
  // Only behind a reverse proxy may X-Forwarded-For name the client (the auth failure slowdown keys on it).
  app.proxy = services.options.trustProxy;
  const { metrics } = services;

  /** Labels come from the matched route only, so random paths cannot grow the label set. */
  const counters = new Map<string, Map<number, RouteCounter>>();
  const counterFor = (path: string, route: string | undefined, status: number): RouteCounter => {
    const routeKey = route ?? (INTERFACES.exec(path)?.[1].toLowerCase() || 'other');
    let byStatus = counters.get(routeKey);
    if (!byStatus) counters.set(routeKey, (byStatus = new Map()));
    let counter = byStatus.get(status);
    if (!counter) {
      const match = INTERFACES.exec(route ?? path);
      const iface = match ? match[1].toLowerCase().replace('constellation', 'platform') : 'other';
      const action = route ? (match ? match[2] : route).toLowerCase() : 'unmatched';
      const requests = metrics.requests.labels({ interface: iface, action, status: String(status) });
      const duration = metrics.requestDuration.labels({ interface: iface, action });
      counter = { count: () => requests.inc(), time: (seconds) => duration.observe(seconds) };
      byStatus.set(status, counter);
    }
    return counter;
  };

  // The documentation's PowerShell example calls `http://host:8088//rest/consumer/...`: repeated
  // slashes are collapsed before anything looks at the path (the query string is kept as it is).
  app.use((ctx, next) => {
    if (ctx.path.includes('//')) ctx.path = ctx.path.replace(/\/{2,}/g, '/');
    return next();
  });

  // Request ids only need to be unique within this process's log: a counter is enough and costs nothing.
  const idPrefix = randomUUID().slice(0, 8);
  let requests = 0;
  const debug = services.logger.isLevelEnabled('debug');
  app.use(async (ctx, next) => {
    ctx.state.requestId = `${idPrefix}-${++requests}`;
    const started = performance.now();
    // Read now: a detached poll drops the parsed URL (detached.ts), which reading it later would rebuild.
    const { path, method } = ctx;
    if (!readiness.ready) ctx.set('Connection', 'close');
    let failed = true;
    try {
      await next();
      failed = false;
    } finally {
      const route = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
      const { requestId, detached } = ctx.state;
      // Captures strings only: a detached long-poll (detached.ts) keeps this closure, not the context.
      const record = (status: number) => {
        const counter = counterFor(path, typeof route === 'string' ? route : undefined, status);
        counter.count();
        counter.time((performance.now() - started) / 1000);
        if (debug && !failed) {
          services.logger.debug({ reqId: requestId, method, path, status, ms: Math.round(performance.now() - started) }, 'request');
        }
      };
      if (detached && !failed) detached.whenAnswered(record);
      else record(ctx.status);
    }
  });
  app.use(errorMapping(services.logger));
  const corsHeaders = cors({
    origin: '*',
    allowMethods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
    allowHeaders: ['Content-Type', 'SentinelName', 'PackageName', 'AccessKey'],
    maxAge: 600,
  });
  // A preflight without CORS request headers still gets an answer, never an authentication error.
  const preflight: Koa.Middleware<HubState> = (ctx, next) => {
    if (ctx.method !== 'OPTIONS') return next();
    ctx.set('Allow', 'GET, POST, DELETE, OPTIONS');
    ctx.status = 204;
  };
  // CORS headers only mean something to a browser, which always sends Origin: scripts and devices
  // without it get a leaner answer. Vary tells caches that the answer depends on that header.
  app.use((ctx, next) => {
    if (ctx.get('Origin')) return corsHeaders(ctx, () => preflight(ctx, next));
    if (ctx.method === 'OPTIONS' || !isPollPath(ctx.path)) {
      ctx.set('Vary', 'Origin');
      return preflight(ctx, next);
    }
    // A poll that waits would keep the response's header object (~240 B) for the whole wait: its
    // answer sets Vary when written (detached.ts); one answered in the chain gets it here.
    ctx.state.varyOrigin = true;
    return (next() as Promise<void>).then(
      () => {
        if (ctx.respond !== false) ctx.set('Vary', 'Origin');
      },
      (thrown: unknown) => {
        ctx.set('Vary', 'Origin');
        throw thrown;
      },
    );
  });

  // Whatever no router answered: an unknown action or resource. (Routers' allowedMethods answer 405 first.)
  const unknownAsNotFound: Koa.Middleware<HubState> = async (ctx, next) => {
    await next();
    if (ctx.status === 404 && ctx.body == null) throw unknownPath(ctx.path);
  };

  const ops = new Router<HubState>();
  ops.get('/health', (ctx) => {
    ctx.body = { Status: 'ok' };
  });
  ops.get('/ready', (ctx) => {
    ctx.status = readiness.ready ? 200 : 503;
    ctx.body = { Status: readiness.ready ? 'ready' : 'not ready' };
  });
  ops.get('/metrics', async (ctx) => {
    if (!services.options.metricsOpen && !authenticate(services.configuration, 'management', authenticationValues(ctx))) {
      throw forbidden();
    }
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });

  const readBody = bodyReader(services);

  const methodNotAllowed = () => new HubError(405, 'MethodNotAllowed', 'The requested resource does not support this HTTP method.');
  // The router would answer HEAD with the GET handler and drop the body: a HEAD GetMessages or
  // GetStateObjects would consume the caller's queued updates and a HEAD PushStateObject would write.
  // The interfaces' GET actions are not safe, so HEAD is refused before anything runs (Constellation's
  // Web API does not map HEAD to GET either).
  const refuseHead: Koa.Middleware<HubState> = (ctx, next) => {
    if (ctx.method !== 'HEAD') return next();
    ctx.set('Allow', 'GET, POST');
    throw methodNotAllowed();
  };
  // The router's middleware types carry its own context additions; Koa hands them a plain context.
  // Authentication comes before the body is read: a caller without a valid key never gets to send one.
  const mounted = (interfaceName: InterfaceName, router: Router<HubState>): Koa.Middleware<HubState> =>
    compose([
      refuseHead,
      unknownAsNotFound,
      authenticateAs(interfaceName, services),
      readBody,
      router.routes(),
      router.allowedMethods({ throw: true, methodNotAllowed, notImplemented: methodNotAllowed }),
    ] as unknown as Koa.Middleware<HubState>[]);
  // Each request meets only the router of its interface; everything else, the operational routes.
  const byInterface = new Map([
    ['consumer', mounted('consumer', consumerRouter(services))],
    ['platform', mounted('platform', platformRouter('/rest/platform', services))],
    ['constellation', mounted('platform', platformRouter('/rest/constellation', services))],
    ['management', mounted('management', managementRouter(services))],
  ]);
  app.use(consoleRoutes(services));
  const operational = compose([unknownAsNotFound, ops.routes()] as unknown as Koa.Middleware<HubState>[]);
  app.use((ctx, next) => {
    const match = INTERFACES.exec(ctx.path);
    const router = match ? byInterface.get(match[1].toLowerCase()) : undefined;
    return (router ?? operational)(ctx, next);
  });
  return app;
}
