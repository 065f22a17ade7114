/** The wire shapes of StateObjects and messages (wire.md), built from what the store keeps. */
import type { StoredMessage } from './ports/messages.js';
import type { StoredStateObject } from './ports/stateObjects.js';

export interface StateObjectRecord {
  SentinelName: string;
  PackageName: string;
  Name: string;
  Type: string;
  Metadatas: Record<string, string>;
  LastUpdate: string;
  Lifetime: number;
  IsExpired: boolean;
  Value: unknown;
}

export interface StateObjectUpdate {
  StateObject: StateObjectRecord;
  IsDeleted?: true;
}

export interface MessageRecord {
  Sender: { ConnectionId: string; Type: number; FriendlyName: string };
  Scope: { Scope: number; Args: string[]; SagaId: string | null };
  Key: string;
  Data: unknown;
}

export const isExpired = (row: Pick<StoredStateObject, 'lifetime_s' | 'last_update_ms'>, now: number) =>
  row.lifetime_s > 0 && row.last_update_ms + row.lifetime_s * 1000 <= now;

export function stateObjectRecord(row: StoredStateObject, now: number): StateObjectRecord {
  return {
    SentinelName: row.sentinel_name,
    PackageName: row.package_name,
    Name: row.name,
    Type: row.type,
    Metadatas: JSON.parse(row.metadatas) as Record<string, string>,
    LastUpdate: new Date(row.last_update_ms).toISOString(),
    Lifetime: row.lifetime_s,
    IsExpired: isExpired(row, now),
    Value: JSON.parse(row.value),
  };
}

export function deletedStateObjectUpdate(
  object: { sentinelName: string; packageName: string; name: string; type: string },
  now: number,
): StateObjectUpdate {
  return {
    StateObject: {
      SentinelName: object.sentinelName,
      PackageName: object.packageName,
      Name: object.name,
      Type: object.type,
      Metadatas: {},
      LastUpdate: new Date(now).toISOString(),
      Lifetime: 0,
      IsExpired: false,
      Value: null,
    },
    IsDeleted: true,
  };
}

export function messageRecord(row: StoredMessage): MessageRecord {
  return {
    Sender: { ConnectionId: row.sender_connection_id, Type: row.sender_type, FriendlyName: row.sender_friendly_name },
    Scope: { Scope: row.scope, Args: JSON.parse(row.args) as string[], SagaId: row.saga_id },
    Key: row.key,
    Data: JSON.parse(row.data),
  };
}
