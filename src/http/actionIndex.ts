/**
 * The interfaces' fixed-path actions, looked up by lower-cased path and method in front of the routing
 * table (app.ts). A request for one runs exactly what the table would run for it: its interface's stages
 * (refuse HEAD, authenticate, read the body) under the mount's route, then the action's route with its
 * handlers; the action's own router layer confirms the path (`layer.match`, the router's case and
 * trailing-slash rules). Everything else goes to the table: paths with parameters, unknown actions,
 * other methods, a trailing slash, other paths. One Map lookup and a precomposed chain instead of two
 * router dispatches (each scans its routes and composes the chain anew for every request).
 */
import type Router from '@koa/router';
import type { Layer } from '@koa/router';
import type Koa from 'koa';
import compose from 'koa-compose';
import type { HubState } from './context.js';

/** What the metrics read (app.ts): the route the table matched, as @koa/router sets it. */
type Routed = Koa.ParameterizedContext<HubState> & { _matchedRoute?: string | RegExp };

interface IndexedAction {
  layer: Layer<HubState>;
  /** The table's route the interface is mounted on: the matched route until the stages let the request in. */
  mount: string;
  run: Koa.Middleware<HubState>;
}

export class ActionIndex {
  private readonly byPath = new Map<string, Map<string, IndexedAction>>();

  /**
   * Indexes `router`'s fixed-path routes, mounted on the table at `mount` behind `stages`. A router with
   * middleware of its own (`router.use`) is left to the table: its chains depend on the path.
   */
  add(mount: string, stages: Koa.Middleware<HubState>[], router: Router<HubState>): void {
    if (router.stack.some((layer) => layer.methods.length === 0)) return;
    for (const layer of router.stack) {
      if (typeof layer.path !== 'string' || layer.paramNames.length > 0) continue;
      const path = layer.path;
      const routed: Koa.Middleware<HubState> = (ctx, next) => {
        (ctx as Routed)._matchedRoute = path;
        return next();
      };
      const action = { layer, mount, run: compose([...stages, routed, ...layer.stack] as Koa.Middleware<HubState>[]) };
      const key = path.toLowerCase();
      let byMethod = this.byPath.get(key);
      if (!byMethod) this.byPath.set(key, (byMethod = new Map()));
      // The router runs every route matching path and method in order; a handler ends the chain, so the first answers.
      for (const method of layer.methods) if (!byMethod.has(method)) byMethod.set(method, action);
    }
  }

  /** The indexed actions, then `table` for every other request. */
  before(table: Koa.Middleware<HubState>): Koa.Middleware<HubState> {
    const byPath = this.byPath;
    return (ctx, next) => {
      const path = ctx.path;
      const action = byPath.get(path.toLowerCase())?.get(ctx.method);
      if (action === undefined || !action.layer.match(path)) return table(ctx, next);
      (ctx as Routed)._matchedRoute = action.mount;
      return action.run(ctx, next);
    };
  }
}
