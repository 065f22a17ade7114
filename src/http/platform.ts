/** The virtual package interface (`platform`, alias `constellation`): shared actions plus its own. */
import Router from '@koa/router';
import { hubError } from '../errors.js';
import { packageDescriptor } from '../hub/packages/descriptorSchema.js';
import { parseLogLevel } from '../hub/packages/packageLogs.js';
import { parseBody, pushStateObjectBody } from './bodies.js';
import type { HubServices, HubState } from './context.js';
import { noContent } from './context.js';
import { parseQueryValue } from './lenientJson.js';
import { filterParam, jsonBody, nameParam, optionalNameParam, queryParam, requiredParam } from './request.js';
import { registerSharedActions } from './sharedActions.js';
import { MAX_TYPE_LENGTH } from '../hub/access/requestNames.js';

/** Longer values belong in the POST form of PushStateObject. */
export const MAX_QUERY_VALUE_LENGTH = 8 * 1024;

function lifetimeParam(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 0;
  if (!/^\d{1,9}$/.test(raw.trim())) {
    throw hubError('InvalidParameter', { parameter: 'lifetime', expected: 'a whole number of seconds ≥ 0', got: raw });
  }
  return Number(raw);
}

export function platformRouter(prefix: string, services: HubServices): Router<HubState> {
  const router = new Router<HubState>({ prefix });
  registerSharedActions(router, services);
  const { stateObjects, packageLogs, configuration, descriptors } = services;

  router.get('/PushStateObject', async (ctx) => {
    const name = nameParam(ctx, 'name');
    const value = queryParam(ctx, 'value');
    if (value === undefined) throw hubError('MissingParameter', { parameter: 'value' });
    if (value.length > MAX_QUERY_VALUE_LENGTH) {
      throw hubError('ValueTooLarge', { max: MAX_QUERY_VALUE_LENGTH });
    }
    await stateObjects.push(ctx.state.caller, {
      name,
      value: parseQueryValue(value),
      type: optionalNameParam(ctx, 'type', MAX_TYPE_LENGTH),
      lifetime: lifetimeParam(queryParam(ctx, 'lifetime')),
      metadatas: {},
    });
    noContent(ctx);
  });

  router.post('/PushStateObject', async (ctx) => {
    const body = parseBody(pushStateObjectBody, jsonBody(ctx));
    await stateObjects.push(ctx.state.caller, {
      name: body.Name,
      value: body.Value,
      type: body.Type || undefined,
      lifetime: body.Lifetime ?? 0,
      metadatas: body.Metadatas ?? {},
    });
    noContent(ctx);
  });

  router.get('/PurgeStateObjects', async (ctx) => {
    await stateObjects.purge(ctx.state.caller, filterParam(ctx, 'name'), filterParam(ctx, 'type'));
    noContent(ctx);
  });

  router.get('/WriteLog', async (ctx) => {
    const message = requiredParam(ctx, 'message');
    const rawLevel = queryParam(ctx, 'level') || 'Info';
    const level = parseLogLevel(rawLevel);
    if (!level)
      throw hubError('InvalidParameter', { parameter: 'level', expected: 'Info, Warn or Error', got: rawLevel });
    await packageLogs.write(ctx.state.caller, level, message);
    noContent(ctx);
  });

  router.get('/GetSettings', (ctx) => {
    const { sentinelName, packageName } = ctx.state.caller;
    const ref = configuration.instance(sentinelName, packageName);
    ctx.body = ref ? configuration.resolveSettings(ref) : {};
  });

  router.post('/DeclarePackageDescriptor', async (ctx) => {
    const descriptor = parseBody(packageDescriptor, jsonBody(ctx));
    await descriptors.declare(ctx.state.caller, descriptor);
    noContent(ctx);
  });

  return router;
}
