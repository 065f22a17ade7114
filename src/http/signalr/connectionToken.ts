/**
 * The connection token clients echo on every request: the connection's id and its two subscriptions'
 * ids, so any process can serve the connection from the store.
 */
import { randomUUID } from 'node:crypto';

/** What the connection token names: the connection and its two subscriptions (GUIDs). */
export interface ConnectionIds {
  id: string;
  messages: string;
  stateObjects: string;
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const newConnectionIds = (): ConnectionIds => ({
  id: randomUUID(),
  messages: randomUUID(),
  stateObjects: randomUUID(),
});

/** The opaque token clients echo: the three ids, dot-separated. */
export const encodeToken = (ids: ConnectionIds) => `${ids.id}.${ids.messages}.${ids.stateObjects}`;

export function decodeToken(token: string | undefined): ConnectionIds | undefined {
  const parts = (token ?? '').split('.');
  if (parts.length !== 3 || !parts.every((p) => GUID.test(p))) return undefined;
  return { id: parts[0], messages: parts[1], stateObjects: parts[2] };
}
