/**
 * Subscribing and polling as a client does, through its own interface (consumer, or platform for a
 * package). A poll answers at once unless its query sets a timeout, and fails the test unless it is a 200.
 */
import { expect } from 'vitest';
import type { MessageRecord, StateObjectUpdateRecord } from '../../src/hub/records.js';
import type { Identity } from './testHub.js';
import { get, idOf } from './testHub.js';

type Hub = { url: string };
type Query = Record<string, string | number>;

const interfaceOf = (who: Identity) => (who.SentinelName === 'Consumer' ? 'consumer' : 'platform');

export const subscribeToMessages = async (h: Hub, who: Identity, query: Query = {}): Promise<string> =>
  idOf(await get(h, `${interfaceOf(who)}/SubscribeToMessage`, who, query));

export const subscribeToStateObjects = async (h: Hub, who: Identity, query: Query = {}): Promise<string> =>
  idOf(await get(h, `${interfaceOf(who)}/SubscribeToStateObjects`, who, query));

async function poll<T>(h: Hub, action: string, who: Identity, id: string, query: Query): Promise<T[]> {
  const reply = await get(h, `${interfaceOf(who)}/${action}`, who, { subscriptionId: id, timeout: 0, ...query });
  expect(reply.status, reply.text).toBe(200);
  return reply.json<T[]>();
}

export const pollMessages = (h: Hub, who: Identity, id: string, query: Query = {}) =>
  poll<MessageRecord>(h, 'GetMessages', who, id, query);

export const pollStateObjects = (h: Hub, who: Identity, id: string, query: Query = {}) =>
  poll<StateObjectUpdateRecord>(h, 'GetStateObjects', who, id, query);

/** Each update as [name, value], a purged StateObject's value 'deleted'. */
export const namesAndValues = (updates: StateObjectUpdateRecord[]) =>
  updates.map((u) => [u.StateObject.Name, u.IsDeleted ? 'deleted' : u.StateObject.Value]);

export const dataOf = (messages: MessageRecord[]) => messages.map((m) => m.Data);
