/**
 * Hub method calls: the hub and method named in an invocation (case-insensitively), its argument
 * count checked, then the method run as the connection's caller. Whatever goes wrong becomes the
 * result's `E`, never a failed request: an unknown hub or method, a wrong argument count, an argument
 * of the wrong kind, a refusal of the domain (a message its credential may not send).
 */
import { HubError } from '../../errors.js';
import { checkFilter, checkRequestName } from '../../hub/access/requestNames.js';
import type { HubServices } from '../context.js';
import type { HubConnection } from './connection.js';
import type { HubInvocation, HubName, HubResult } from './protocol.js';

export interface HubMethod {
  /** Accepted argument counts: exactly `min` or up to `max`. */
  min: number;
  max: number;
  run(connection: HubConnection, args: unknown[], services: HubServices): Promise<unknown>;
}

export type HubMethods = Record<string, HubMethod>;

/** A mistake in a call's arguments: its text goes back as the result's error. */
export class ArgumentProblem extends Error {}

/** A filter argument: `*` when null or absent (the JS proxies pass what the page gave). */
export function filterArg(value: unknown, what: string): string {
  if (value === undefined || value === null || value === '') return '*';
  if (typeof value !== 'string') throw new ArgumentProblem(`The ${what} filter must be a string.`);
  return checkFilter(`filter '${what}'`, value);
}

export function nameArg(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '') throw new ArgumentProblem(`The ${what} must be a non-empty string.`);
  return checkRequestName(what, value);
}

export const method = (min: number, max: number, run: HubMethod['run']): HubMethod => ({ min, max, run });

/** Each hub's methods by lower-cased name. */
export type HubTable = ReadonlyMap<string, { name: HubName; methods: ReadonlyMap<string, HubMethod> }>;

export function hubTable(hubs: Record<HubName, HubMethods>): HubTable {
  const table = new Map<string, { name: HubName; methods: Map<string, HubMethod> }>();
  for (const [name, methods] of Object.entries(hubs) as [HubName, HubMethods][]) {
    table.set(name.toLowerCase(), {
      name,
      methods: new Map(Object.entries(methods).map(([m, def]) => [m.toLowerCase(), def])),
    });
  }
  return table;
}

const failure = (id: string, error: string): HubResult => ({ I: id, E: error });

/** Runs one invocation on `connection`: the result to send back (never throws). */
export async function invoke(
  table: HubTable,
  connection: HubConnection,
  call: HubInvocation,
  services: HubServices,
): Promise<HubResult> {
  const hub = table.get(call.hub.toLowerCase());
  if (!hub || !connection.hubs.has(hub.name)) return failure(call.id, `'${call.hub}' Hub could not be resolved.`);
  const found = hub.methods.get(call.method.toLowerCase());
  if (!found) return failure(call.id, `'${call.method}' method could not be resolved on '${hub.name}'.`);
  if (call.args.length < found.min || call.args.length > found.max) {
    const expected = found.min === found.max ? `${found.min}` : `${found.min} to ${found.max}`;
    return failure(
      call.id,
      `'${call.method}' method on '${hub.name}' takes ${expected} argument(s), not ${call.args.length}.`,
    );
  }
  try {
    const value = await found.run(connection, call.args, services);
    return value === undefined ? { I: call.id } : { I: call.id, R: value };
  } catch (error) {
    if (error instanceof ArgumentProblem || error instanceof HubError) return failure(call.id, error.message);
    services.logger.error({ err: error, hub: hub.name, method: call.method }, 'SignalR hub method failed');
    return failure(call.id, `There was an error invoking Hub method '${hub.name}.${call.method}'.`);
  }
}
