/**
 * The Koa application: its front (request metrics, the error mapping, SignalR, CORS), then one router
 * for every path: each interface under its prefix (refuse HEAD, authenticate, read the body, its own
 * router), the console's page and the operational endpoints, with the interfaces' fixed-path actions
 * indexed in front of it (actionIndex.ts). What no route answers is 404 (405 for a known action's other
 * method).
 */
import cors from '@koa/cors';
import Router from '@koa/router';
import type { RouterMiddleware } from '@koa/router';
import type Koa from 'koa';
import KoaApp from 'koa';
import { randomUUID } from 'node:crypto';
import { hubError } from '../errors.js';
import type { InterfaceName } from '../hub/access/caller.js';
import type { RequestRecorder } from '../metrics.js';
import { ActionIndex } from './actionIndex.js';
import { bodyReader } from './bodyReading.js';
import { consoleAssets } from './consoleAssets.js';
import { consumerRouter } from './consumer.js';
import type { HubServices, HubState } from './context.js';
import { answerError } from './errorMapping.js';
import { managementRouter } from './management/router.js';
import type { Readiness } from './ops.js';
import { opsRouter } from './ops.js';
import { platformRouter } from './platform.js';
import { requireCaller } from './requireCaller.js';
import type { SignalR } from './signalr/index.js';

/** The route an interface is mounted on: its prefix, then any action (`{*action}` may be empty). */
const ANY_ACTION = '/{*action}';

/** A route's metric labels: `/rest/<interface>/<action>`, an interface's mount (unmatched), or another path. */
function routeLabels(route: string | undefined): { iface: string; action: string } {
  if (route === undefined) return { iface: 'other', action: 'unmatched' };
  const segments = route.split('/');
  if (segments[1] !== 'rest' || segments.length < 4) return { iface: 'other', action: route.toLowerCase() };
  const iface = segments[2].toLowerCase() === 'constellation' ? 'platform' : segments[2].toLowerCase();
  return { iface, action: route.endsWith(ANY_ACTION) ? 'unmatched' : segments.slice(3).join('/').toLowerCase() };
}

const methodNotAllowed = () => hubError('MethodNotAllowed');

/**
 * The front of every request, one middleware rather than four levels of Koa's chain: gives the request
 * its id; passes SignalR's paths to SignalR (which answers CORS itself: pages on another origin send
 * credentials, so Origin is echoed) and the rest to the routes, with CORS and Vary (corsAndPreflight);
 * answers what any of them throws as the error mapping says (errorMapping.ts); then counts and times
 * the request by matched route (at its answer, for a detached poll).
 */
function front(services: HubServices, readiness: Readiness, signalr?: SignalR): Koa.Middleware<HubState> {
  const { metrics, logger } = services;
  const withCors = corsAndPreflight();

  /** Labels come from the matched route only, so random paths cannot grow the label set. */
  const recorders = new Map<string | undefined, Map<number, RequestRecorder>>();
  const recorderFor = (route: string | undefined, status: number): RequestRecorder => {
    let byStatus = recorders.get(route);
    if (!byStatus) recorders.set(route, (byStatus = new Map()));
    let recorder = byStatus.get(status);
    if (!recorder) {
      const { iface, action } = routeLabels(route);
      recorder = metrics.requests.recorder(iface, action, status);
      byStatus.set(status, recorder);
    }
    return recorder;
  };

  /** A request answered with `status`, counted and timed under its matched route. */
  const recordAnswer = (status: number, startedAt: number, route: string | undefined) =>
    recorderFor(route, status).record((performance.now() - startedAt) / 1000);

  // Request ids only need to be unique within this process's log: a counter is enough and costs nothing.
  const idPrefix = randomUUID().slice(0, 8);
  let requests = 0;
  const debug = logger.isLevelEnabled('debug');
  return async (ctx, next) => {
    ctx.state.requestId = `${idPrefix}-${++requests}`;
    const started = performance.now();
    // Read now: a detached poll drops the parsed URL (detached.ts), which reading it later would rebuild.
    const { path, method } = ctx;
    if (!readiness.ready) ctx.set('Connection', 'close');
    let failed = true;
    try {
      try {
        const signalrAnswer = signalr?.answer(ctx);
        if (signalrAnswer) await signalrAnswer;
        else if (method === 'OPTIONS' || ctx.get('Origin')) await withCors(ctx, next);
        else {
          // Without Origin, Vary goes with the answer (corsAndPreflight says why), the error mapping's too.
          ctx.state.varyOrigin = true;
          await next();
          // Added to what the answer varies on already (the console's compressed files: Accept-Encoding).
          if (ctx.respond !== false) ctx.vary('Origin');
        }
      } catch (thrown) {
        if (ctx.state.varyOrigin) ctx.vary('Origin');
        answerError(ctx, thrown, logger);
      }
      failed = false;
    } finally {
      const matched = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
      const route = typeof matched === 'string' ? matched : undefined;
      const { requestId, detached } = ctx.state;
      if (!debug) {
        // A detached poll keeps its start and route in its DetachedAnswer, no closure of its own.
        if (detached && !failed) detached.whenAnswered(recordAnswer, started, route);
        else recordAnswer(ctx.status, started, route);
      } else {
        // Captures strings only: a detached long-poll (detached.ts) keeps this closure, not the context.
        const record = (status: number) => {
          recordAnswer(status, started, route);
          if (!failed)
            logger.debug(
              { reqId: requestId, method, path, status, ms: Math.round(performance.now() - started) },
              'request',
            );
        };
        if (detached && !failed) detached.whenAnswered(record);
        else record(ctx.status);
      }
    }
  };
}

/**
 * CORS headers only mean something to a browser, which always sends Origin: scripts and devices without
 * it get a leaner answer. Vary tells caches that the answer depends on that header; without Origin it is
 * written with the answer (front, above): a waiting poll would otherwise keep the response's header
 * object (~240 B) for its whole wait, and an answer written outside Koa (a poll's, detached.ts; a 204,
 * context.ts) puts it in its one flat header list instead of building that object (setHeader, ~0.9 µs
 * of a push). So this serves only requests with Origin, and preflights (OPTIONS) with or without it:
 * front sends every other request past it.
 */
function corsAndPreflight(): Koa.Middleware<HubState> {
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
  return (ctx, next) => {
    if (ctx.get('Origin')) return corsHeaders(ctx, () => preflight(ctx, next));
    ctx.set('Vary', 'Origin');
    return preflight(ctx, next);
  };
}

/** Every path: the interfaces under their prefixes, the console's page, the operational endpoints. */
function routes(services: HubServices, readiness: Readiness, signalr?: SignalR): Koa.Middleware<HubState> {
  const readBody = bodyReader(services);
  const table = new Router<HubState>();
  const actions = new ActionIndex();
  /**
   * An interface: HEAD is refused before anything runs (the router would answer it with the GET
   * handler, and a HEAD GetMessages would consume, a HEAD PushStateObject write; Constellation's Web API
   * does not map HEAD to GET either); the caller is authenticated before its body is read, so a caller
   * without a valid key never gets to send one; what its router does not answer is 405 or 404.
   */
  const mount = (prefix: string, interfaceName: InterfaceName, router: Router<HubState>) => {
    const admit = requireCaller(interfaceName, services);
    const guard: Koa.Middleware<HubState> = (ctx, next) => {
      if (ctx.method !== 'HEAD') return admit(ctx, next);
      ctx.set('Allow', 'GET, POST');
      throw methodNotAllowed();
    };
    const unrouted: Koa.Middleware<HubState> = (ctx) => {
      const onPath = router.match(ctx.path, ctx.method).path;
      if (!router.methods.includes(ctx.method) || onPath.some((layer) => layer.methods.length > 0))
        throw methodNotAllowed();
      throw hubError(
        'NotFound',
        { path: ctx.path },
        `No action was found on the ${interfaceName} interface that matches the name '${ctx.path.slice(prefix.length + 1)}'.`,
      );
    };
    const mounted = `${prefix}${ANY_ACTION}`;
    // The router's middleware types carry its own context additions; Koa hands them a plain context.
    table.all(mounted, ...([guard, readBody, router.routes(), unrouted] as unknown as RouterMiddleware<HubState>[]));
    actions.add(mounted, [guard, readBody], router);
  };
  mount('/rest/consumer', 'consumer', consumerRouter(services));
  mount('/rest/platform', 'platform', platformRouter('/rest/platform', services));
  mount('/rest/constellation', 'platform', platformRouter('/rest/constellation', services));
  mount(
    '/rest/management',
    'management',
    managementRouter(services, () => signalr?.connections.list() ?? []),
  );
  // The console's page: / redirects to it, /console/… serves its files.
  table.all(['/', '/console', '/console/{*file}'], consoleAssets() as unknown as RouterMiddleware<HubState>);
  table.use(opsRouter(services, readiness).routes());
  return actions.before(table.routes() as unknown as Koa.Middleware<HubState>);
}

export function createApp(services: HubServices, readiness: Readiness, signalr?: SignalR): Koa<HubState> {
  const app = new KoaApp<HubState>();
  // Only behind a reverse proxy may X-Forwarded-For name the client (the auth failure slowdown keys on it).
  app.proxy = services.options.trustProxy;
  app.use(front(services, readiness, signalr));
  app.use(routes(services, readiness, signalr));
  // Whatever no route answered: an unknown resource.
  app.use((ctx) => {
    throw hubError('NotFound', { path: ctx.path });
  });
  return app;
}
