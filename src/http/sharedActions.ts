/**
 * The actions the consumer and the virtual package interfaces share: written once, mounted on both.
 * Handlers only parse, call the hub and set status and body.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { hubError } from '../errors.js';
import { parseBody, sendMessageBody } from './bodies.js';
import type { HubServices, HubState } from './context.js';
import { clientGone, noContent, sendSubscriptionId } from './context.js';
import { answerLater } from './detached.js';
import { parseQueryValue } from './lenientJson.js';
import {
  filterParam,
  jsonBody,
  limitParam,
  nameParam,
  optionalNameParam,
  queryParam,
  requiredParam,
  timeoutParam,
} from './request.js';
import { checkRequestName } from '../hub/access/requestNames.js';

const splitArgs = (raw: string | undefined) =>
  (raw ?? '')
    .split(',')
    .map((a) => checkRequestName("parameter 'args'", a.trim()))
    .filter((a) => a.length > 0);

const stateObjectFilter = (ctx: Context) => ({
  sentinel: filterParam(ctx, 'sentinel'),
  package: filterParam(ctx, 'package'),
  name: filterParam(ctx, 'name'),
  type: filterParam(ctx, 'type'),
});

const optionalId = (ctx: Context) => queryParam(ctx, 'subscriptionId') || undefined;

export function registerSharedActions(router: Router<HubState>, { messages, stateObjects, logger }: HubServices): void {
  router.get('/CheckAccess', (ctx) => {
    ctx.status = 200;
    ctx.body = '';
  });

  router.get('/SendMessage', async (ctx) => {
    const data = queryParam(ctx, 'data');
    await messages.send(ctx.state.caller, {
      scope: requiredParam(ctx, 'scope'),
      args: splitArgs(queryParam(ctx, 'args')),
      key: nameParam(ctx, 'key'),
      data: data === undefined ? null : parseQueryValue(data),
      sagaId: optionalNameParam(ctx, 'sagaId') ?? null,
    });
    noContent(ctx);
  });

  router.post('/SendMessage', async (ctx) => {
    const body = parseBody(sendMessageBody, jsonBody(ctx));
    const scope = body.Scope.Scope ?? body.Scope.Type;
    if (scope === undefined)
      throw hubError('InvalidBody', { field: 'Scope.Scope (or Scope.Type)', problem: 'is required' });
    await messages.send(ctx.state.caller, {
      scope,
      args: body.Scope.Args ?? [],
      key: body.Key,
      data: body.Data ?? null,
      sagaId: body.Scope.SagaId ?? null,
    });
    noContent(ctx);
  });

  router.get('/SubscribeToMessage', async (ctx) => {
    sendSubscriptionId(ctx, await messages.subscribe(ctx.state.caller, optionalId(ctx)));
  });

  router.get('/SubscribeToMessageGroup', async (ctx) => {
    const group = nameParam(ctx, 'group');
    sendSubscriptionId(ctx, await messages.joinGroup(ctx.state.caller, group, optionalId(ctx)));
  });

  router.get('/GetMessages', (ctx) => {
    const subscriptionId = queryParam(ctx, 'subscriptionId');
    const timeoutMs = timeoutParam(ctx);
    const limit = limitParam(ctx);
    const poll = messages.poll(ctx.state.caller, subscriptionId, timeoutMs, limit, clientGone(ctx));
    answerLater(ctx, poll, logger);
  });

  router.get('/RequestStateObjects', async (ctx) => {
    ctx.body = await stateObjects.request(ctx.state.caller, stateObjectFilter(ctx));
  });

  router.get('/SubscribeToStateObjects', async (ctx) => {
    sendSubscriptionId(ctx, await stateObjects.subscribe(ctx.state.caller, optionalId(ctx), stateObjectFilter(ctx)));
  });

  router.get('/GetStateObjects', (ctx) => {
    const subscriptionId = queryParam(ctx, 'subscriptionId');
    const timeoutMs = timeoutParam(ctx);
    const limit = limitParam(ctx);
    const poll = stateObjects.poll(ctx.state.caller, subscriptionId, timeoutMs, limit, clientGone(ctx));
    answerLater(ctx, poll, logger);
  });
}
