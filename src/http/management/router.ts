/**
 * The management interface: configuration, credentials, sentinels, package instances, license, logs,
 * plus the repository (repository.ts) and the console's endpoints (console.ts).
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { hubError } from '../../errors.js';
import { licenseSchema } from '../../hub/configuration/license.js';
import { parseLogLevel } from '../../hub/packages/packageLogs.js';
import { parseBody } from '../bodies.js';
import type { ChangeOrigin } from '../../hub/configuration/configuration.js';
import type { HubServices, HubState } from '../context.js';
import { clientGone, noContent } from '../context.js';
import { answerLater } from '../detached.js';
import {
  authorizationsBody,
  credentialBody,
  groupsBody,
  instanceBody,
  recoveryBody,
  sentinelBody,
  settingsBody,
} from './bodies.js';
import { jsonBody, limitParam, pathName, queryParam, timeoutParam } from '../request.js';
import { registerRepositoryRoutes } from './repository.js';
import type { LiveConnections } from './console.js';
import { registerConsoleEndpoints } from './console.js';

const PREFIX = '/rest/management';

/** Who made a configuration change and with which request, for the configuration's history. */
const origin = (ctx: Context & { state: HubState }): ChangeOrigin => ({
  by: ctx.state.caller?.credential.name ?? '(unknown)',
  reason: `${ctx.method} ${ctx.path.slice(PREFIX.length + 1)}`,
});

const trueParam = (ctx: Context, name: string) => (queryParam(ctx, name) ?? '').toLowerCase() === 'true';

function sinceParam(ctx: Context): number | undefined {
  const raw = queryParam(ctx, 'since');
  if (!raw) return undefined;
  const ms = /^\d+$/.test(raw) ? Number(raw) : Date.parse(raw);
  if (!Number.isFinite(ms))
    throw hubError('InvalidParameter', {
      parameter: 'since',
      expected: 'an ISO 8601 date or epoch milliseconds',
      got: raw,
    });
  return ms;
}

/**
 * `liveConnections`: the SignalR connections the serving process holds now (none when it serves no
 * SignalR), listed by `server/status`.
 */
export function managementRouter(services: HubServices, liveConnections: LiveConnections): Router<HubState> {
  const router = new Router<HubState>({ prefix: PREFIX });
  const { descriptors, packageLogs } = services;
  const { configurationFile, sentinels, instances, credentials, license } = services.management;

  router.get('/CheckAccess', (ctx) => {
    ctx.status = 200;
    ctx.body = '';
  });
  router.get('/server/version', (ctx) => {
    ctx.body = JSON.stringify(services.version);
    ctx.type = 'application/json; charset=utf-8';
  });

  // ---- configuration file ----
  router.get('/configuration', async (ctx) => {
    ctx.type = 'application/xml; charset=utf-8';
    ctx.body = await configurationFile.read();
  });
  router.post('/configuration', async (ctx) => {
    const text = (ctx.request as { body?: unknown }).body;
    if (typeof text !== 'string' || text.trim() === '') {
      throw hubError('MissingConfiguration');
    }
    await configurationFile.save(text, origin(ctx));
    noContent(ctx);
  });
  router.get('/configuration/reload', async (ctx) => {
    ctx.body = {
      DeployedTo: (await configurationFile.reload(trueParam(ctx, 'deployConfiguration'), ctx.state.caller, origin(ctx)))
        .deployedTo,
    };
  });
  router.get('/configuration/recoveryoptions', (ctx) => {
    ctx.body = instances.defaultRecovery();
  });
  router.post('/configuration/recoveryoptions', async (ctx) => {
    ctx.body = await instances.setDefaultRecovery(parseBody(recoveryBody, jsonBody(ctx)), origin(ctx));
  });

  // ---- license ----
  router.get('/license', async (ctx) => {
    ctx.body = await license.record();
  });
  router.post('/license', async (ctx) => {
    ctx.body = await license.set(parseBody(licenseSchema, jsonBody(ctx)));
  });

  // ---- sentinels and package instances ----
  router.get('/sentinels', (ctx) => {
    ctx.body = sentinels.list();
  });
  router.post('/sentinels', async (ctx) => {
    const body = parseBody(sentinelBody, jsonBody(ctx));
    ctx.body = await sentinels.upsert(body.Name, body.Credential, origin(ctx));
  });
  router.delete('/sentinels/:sentinel', async (ctx) => {
    await sentinels.delete(pathName(ctx, 'sentinel'), origin(ctx));
    noContent(ctx);
  });
  router.get('/sentinels/:sentinel/packages', async (ctx) => {
    ctx.body = await instances.list(pathName(ctx, 'sentinel'));
  });
  router.post('/sentinels/:sentinel/packages', async (ctx) => {
    ctx.body = await instances.upsert(pathName(ctx, 'sentinel'), parseBody(instanceBody, jsonBody(ctx)), origin(ctx));
  });
  router.get('/sentinels/:sentinel/packages/:package', async (ctx) => {
    ctx.body = await instances.get(pathName(ctx, 'sentinel'), pathName(ctx, 'package'));
  });
  router.delete('/sentinels/:sentinel/packages/:package', async (ctx) => {
    await instances.delete(pathName(ctx, 'sentinel'), pathName(ctx, 'package'), origin(ctx));
    noContent(ctx);
  });
  router.get('/sentinels/:sentinel/packages/:package/recoveryoptions', (ctx) => {
    ctx.body = instances.recovery(pathName(ctx, 'sentinel'), pathName(ctx, 'package'));
  });
  router.post('/sentinels/:sentinel/packages/:package/recoveryoptions', async (ctx) => {
    const options = parseBody(recoveryBody, jsonBody(ctx));
    ctx.body = await instances.setRecovery(pathName(ctx, 'sentinel'), pathName(ctx, 'package'), options, origin(ctx));
  });
  router.get('/sentinels/:sentinel/packages/:package/groups', (ctx) => {
    ctx.body = instances.groups(pathName(ctx, 'sentinel'), pathName(ctx, 'package'));
  });
  router.post('/sentinels/:sentinel/packages/:package/groups', async (ctx) => {
    const groups = parseBody(groupsBody, jsonBody(ctx));
    ctx.body = await instances.setGroups(pathName(ctx, 'sentinel'), pathName(ctx, 'package'), groups, origin(ctx));
  });
  router.get('/sentinels/:sentinel/packages/:package/settings', (ctx) => {
    ctx.body = instances.settings(pathName(ctx, 'sentinel'), pathName(ctx, 'package'));
  });
  router.post('/sentinels/:sentinel/packages/:package/settings', async (ctx) => {
    const values = parseBody(settingsBody, jsonBody(ctx));
    ctx.body = await instances.setSettings(pathName(ctx, 'sentinel'), pathName(ctx, 'package'), values, origin(ctx));
  });
  router.get('/sentinels/:sentinel/packages/:package/descriptor', async (ctx) => {
    const sentinel = pathName(ctx, 'sentinel');
    const instance = pathName(ctx, 'package');
    instances.require(sentinel, instance);
    const descriptor = await descriptors.find(sentinel, instance);
    if (!descriptor) throw hubError('DescriptorNotFound', { sentinel, instance });
    ctx.body = descriptor;
  });

  // ---- credentials ----
  router.get('/credentials', (ctx) => {
    ctx.body = credentials.list(trueParam(ctx, 'includeAccessKeys'));
  });
  router.post('/credentials', async (ctx) => {
    ctx.body = await credentials.upsert(parseBody(credentialBody, jsonBody(ctx)), origin(ctx));
  });
  router.delete('/credentials/:credential', async (ctx) => {
    await credentials.delete(pathName(ctx, 'credential'), origin(ctx));
    noContent(ctx);
  });
  router.get('/credentials/:credential/authorizations', (ctx) => {
    ctx.body = credentials.authorizations(pathName(ctx, 'credential'));
  });
  router.post('/credentials/:credential/authorizations', async (ctx) => {
    const authorizations = parseBody(authorizationsBody, jsonBody(ctx));
    ctx.body = await credentials.setAuthorizations(pathName(ctx, 'credential'), authorizations, origin(ctx));
  });

  // ---- package logs (WriteLog) ----
  router.get('/logs', async (ctx) => {
    const rawLevel = queryParam(ctx, 'level');
    const level = rawLevel ? parseLogLevel(rawLevel) : undefined;
    if (rawLevel && !level)
      throw hubError('InvalidParameter', { parameter: 'level', expected: 'Info, Warn or Error', got: rawLevel });
    const rawAfter = queryParam(ctx, 'after');
    if (rawAfter !== undefined && !/^\d{1,15}$/.test(rawAfter)) {
      throw hubError('InvalidParameter', { parameter: 'after', expected: 'a log Id', got: rawAfter });
    }
    const limit = limitParam(ctx) || 1000;
    const follow = rawAfter !== undefined && queryParam(ctx, 'timeout') !== undefined;
    const query = {
      sentinelName: queryParam(ctx, 'sentinel') || undefined,
      packageName: queryParam(ctx, 'package') || undefined,
      level,
      sinceMs: sinceParam(ctx),
      afterId: rawAfter === undefined ? undefined : Number(rawAfter),
      limit: Math.min(limit, 10_000),
    };
    if (!follow) {
      ctx.body = await packageLogs.read(query);
      return;
    }
    // A follow may wait two minutes: once its parameters are read, it is answered outside Koa, as polls are.
    answerLater(ctx, packageLogs.follow(query, timeoutParam(ctx), clientGone(ctx)), services.logger);
  });

  registerRepositoryRoutes(router, services);
  registerConsoleEndpoints(router, services, liveConnections);
  return router;
}
