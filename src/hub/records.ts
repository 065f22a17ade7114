/** The wire shapes of StateObjects and messages (wire.md), built from what the store keeps. */
import type { Message } from './ports/messages.js';
import type { StateObject, StateObjectChange } from './ports/stateObjects.js';

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

/** One object of GetStateObjects' answer: its record, or its purge. */
export interface StateObjectUpdateRecord {
  StateObject: StateObjectRecord;
  IsDeleted?: true;
}

export interface MessageRecord {
  Sender: { ConnectionId: string; Type: number; FriendlyName: string };
  Scope: { Scope: number; Args: string[]; SagaId: string | null };
  Key: string;
  Data: unknown;
}

export const isExpired = (object: Pick<StateObject, 'lifetimeS' | 'lastUpdateMs'>, now: number) =>
  object.lifetimeS > 0 && object.lastUpdateMs + object.lifetimeS * 1000 <= now;

export function stateObjectRecord(object: StateObject, now: number): StateObjectRecord {
  return {
    SentinelName: object.sentinelName,
    PackageName: object.packageName,
    Name: object.name,
    Type: object.type,
    Metadatas: JSON.parse(object.metadatas) as Record<string, string>,
    LastUpdate: new Date(object.lastUpdateMs).toISOString(),
    Lifetime: object.lifetimeS,
    IsExpired: isExpired(object, now),
    Value: JSON.parse(object.value),
  };
}

export function deletedStateObjectUpdate(object: StateObjectChange, now: number): StateObjectUpdateRecord {
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

export function messageRecord(message: Message): MessageRecord {
  return {
    Sender: {
      ConnectionId: message.senderConnectionId,
      Type: message.senderType,
      FriendlyName: message.senderFriendlyName,
    },
    Scope: { Scope: message.scope, Args: JSON.parse(message.args) as string[], SagaId: message.sagaId },
    Key: message.key,
    Data: JSON.parse(message.data),
  };
}
