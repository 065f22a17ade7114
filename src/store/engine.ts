/**
 * The store's operations as the hub sees them: the seam a second engine (PostgreSQL, next) implements.
 * Each operation is one transaction whose promise settles after its COMMIT; nothing here exposes a
 * statement, a transaction or a connection. The SQLite implementations are StateObjectStore,
 * MessageStore and SubscriptionStore.
 */
import type { MessageRow } from '../db/schema.js';
import type { StateObjectChange, StateObjectGlobs } from './stateObjects.js';
import type { ChangedObject, StateObjectWrite, StoredFilter } from './stateObjectStore.js';
import type { NewMessage, TakenMessages } from './messageStore.js';
import type { Interest, OpenedSubscription, SubscriptionKind, SubscriptionOwner } from './subscriptionStore.js';

export type { ChangedObject, StoredFilter, Interest, MessageRow, NewMessage, OpenedSubscription, StateObjectChange, StateObjectWrite, SubscriptionKind, SubscriptionOwner, TakenMessages };

/** StateObjects as a log with one sequence; subscriptions read it through a cursor per filter. */
export interface StateObjectLog {
  push(write: StateObjectWrite): Promise<void>;
  /** The producer's objects matching the GLOBs become tombstones; returns them. */
  purge(producer: { sentinelName: string; packageName: string }, globs: { name: string; type: string }): Promise<ChangedObject[]>;
  /** Announces objects whose lifetime ran out (a change in the log); returns them. */
  expire(now: number): Promise<ChangedObject[]>;
  /** Reads past the subscription's cursors and moves them, in one transaction; rejects with ClientGone (nothing consumed) if `abort` fired. */
  take(subscription: string, limit: number, abort: AbortSignal): Promise<StateObjectChange[]>;
}

/** Messages as one ordered log with bounded retention; each subscription reads it through its cursor. */
export interface MessageLog {
  /** Appends; with `sagaReplyBy`, only as the answer to an unanswered saga request that caller received (else 403). */
  send(message: NewMessage, options?: { sagaReplyBy?: string; refusal?: string }): Promise<number>;
  take(subscription: string, limit: number, abort: AbortSignal): Promise<TakenMessages>;
  /** Housekeeping: what every cursor has passed, what is past the age limit. */
  sweep(now: number): Promise<number>;
}

export interface SubscriptionRegistry {
  openStateObjects(owner: SubscriptionOwner, requestedId: string | undefined, globs: StateObjectGlobs, exactName: string | null): Promise<OpenedSubscription>;
  openMessages(owner: SubscriptionOwner, requestedId: string | undefined, group?: string): Promise<OpenedSubscription>;
  /** The owner's subscription of that kind with what a poll of it listens for (touched), or undefined. */
  findOwned(owner: SubscriptionOwner, id: string, kind: SubscriptionKind): Promise<Interest | undefined>;
  touched(id: string): Promise<void>;
}

export type LogLevel = 'Info' | 'Warn' | 'Error';

/** One WriteLog entry as stored. */
export interface PackageLogEntry {
  id: number;
  sentinelName: string;
  packageName: string;
  level: LogLevel;
  message: string;
  loggedMs: number;
}

export interface LogQuery {
  sentinelName?: string;
  packageName?: string;
  level?: LogLevel;
  sinceMs?: number;
  /** Following: the oldest entries after this Id (so none is skipped) instead of the newest. */
  afterId?: number;
  limit: number;
}

/** The logs packages write (WriteLog); management reads and follows them. */
export interface PackageLogBook {
  /** Returns the entry's Id. */
  write(entry: Omit<PackageLogEntry, 'id'>): Promise<number>;
  /** The newest `limit` entries matching (with `afterId`: the oldest after it), oldest first. */
  read(query: LogQuery): Promise<PackageLogEntry[]>;
  /** Keeps the newest `keep` entries; returns how many went. */
  trim(keep: number): Promise<number>;
}
