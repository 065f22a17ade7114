/**
 * The methods pages and consumers call on ConsumerHub (and, with the same meaning, packages on
 * ConstellationHub): each one the consumer interface's action of the same name, as the connection's
 * caller, on the connection's own subscriptions.
 */
import type { HubConnection } from './connection.js';
import type { HubMethods } from './hubs.js';
import { ArgumentProblem, filterArg, method, nameArg } from './hubs.js';
import type { HubName } from './protocol.js';

function filterOf(args: unknown[]) {
  return {
    sentinel: filterArg(args[0], 'sentinel'),
    package: filterArg(args[1], 'package'),
    name: filterArg(args[2], 'name'),
    type: filterArg(args[3], 'type'),
  };
}

/** `{Scope, Args, SagaId}`: Scope a name ('Package') from pages, a number from .NET; SagaId a number from pages. */
function scopeOf(value: unknown): { scope: unknown; args: string[]; sagaId: string | null } {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ArgumentProblem('The scope must be an object {Scope, Args, SagaId}.');
  const { Scope, Type, Args, SagaId } = value as Record<string, unknown>;
  const args = Args === undefined || Args === null ? [] : Args;
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string'))
    throw new ArgumentProblem("The scope's Args must be an array of strings.");
  const sagaId =
    SagaId === undefined || SagaId === null || SagaId === ''
      ? null
      : typeof SagaId === 'object'
        ? undefined
        : String(SagaId);
  if (sagaId === undefined) throw new ArgumentProblem("The scope's SagaId must be a string or a number.");
  return { scope: Scope ?? Type, args: args as string[], sagaId };
}

/** Sends each current object matching the filter as one UpdateStateObject call. */
async function requestStateObjects(connection: HubConnection, args: unknown[], hub: HubName): Promise<void> {
  const found = await connection.services.stateObjects.request(connection.caller, filterOf(args));
  connection.enqueue(found.map((so) => connection.invocation(hub, 'UpdateStateObject', [so])));
}

/** What ConsumerHub and ConstellationHub both offer, written under `hub`'s name. */
export function subscriberMethods(hub: HubName): HubMethods {
  return {
    RequestStateObjects: method(4, 4, (c, args) => requestStateObjects(c, args, hub)),
    SubscribeStateObjects: method(4, 4, (c, args) => c.feed.subscribeStateObjects(filterOf(args))),
    UnSubscribeStateObjects: method(4, 4, async (c, args) => c.feed.unsubscribeStateObjects(filterOf(args))),
    // 1.8.2 pages may leave data out, or pass several values (then sent as an array).
    SendMessage: method(2, 32, async (c, args) => {
      const { scope, args: scopeArgs, sagaId } = scopeOf(args[0]);
      const data = args.length > 3 ? args.slice(2) : (args[2] ?? null);
      await c.services.messages.send(
        c.caller,
        { scope, args: scopeArgs, key: nameArg(args[1], 'message key'), data, sagaId },
        { authorize: true, viaHub: true },
      );
    }),
    SubscribeMessages: method(1, 1, (c, args) => c.feed.joinGroup(nameArg(args[0], 'group'))),
    UnSubscribeMessages: method(1, 1, async (c, args) => c.feed.leaveGroup(nameArg(args[0], 'group'))),
  };
}
