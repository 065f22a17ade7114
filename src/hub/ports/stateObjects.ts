/** The StateObject log's port: one sequence orders every change; subscriptions read it through a cursor per filter. */
import type { ClientSignal } from '../polls/clientSignal.js';
import type { DeliveryClaim, JudgedPending } from './deliveryClaim.js';
import type { StateObjectPatterns } from './stateObjectPatterns.js';

export interface StateObjectKey {
  sentinelName: string;
  packageName: string;
  name: string;
}

/**
 * A StateObject as the store keeps it: value and metadatas as JSON text, times in epoch ms. An engine
 * names its columns so in SQL (`AS`), so the rows it reads reach the wire records with no copy per row
 * (they may carry more fields).
 */
export interface StateObject extends StateObjectKey {
  type: string;
  /** JSON text. */
  value: string;
  /** JSON text. */
  metadatas: string;
  lastUpdateMs: number;
  lifetimeS: number;
}

/** Which StateObject a commit changed (pushed, purged or expired), and its type: what the notifier matches filters against. */
export interface StateObjectChange extends StateObjectKey {
  type: string;
}

/** One changed object a poll takes: its latest value, or its purge. */
export interface TakenStateObject extends StateObjectChange {
  /** Unset when the object was purged (or is gone): the record goes out with `IsDeleted`. */
  current: StateObject | undefined;
}

export interface TakenStateObjects {
  objects: TakenStateObject[];
  /** What a claimed take decided about a pending delivery it found (MessageStore.take). */
  judged?: JudgedPending;
}

export interface StateObjectWrite extends StateObject {
  expiresAtMs: number | null;
}

/** Each operation is one transaction whose promise settles after its COMMIT. */
export interface StateObjectStore {
  push(write: StateObjectWrite): Promise<void>;
  /** The producer's objects matching the name and type patterns become tombstones; returns them. */
  purge(
    producer: { sentinelName: string; packageName: string },
    patterns: { name: string; type: string },
  ): Promise<StateObjectChange[]>;
  /** Announces objects whose lifetime ran out (a change in the log); returns them. */
  expire(now: number): Promise<StateObjectChange[]>;
  /**
   * Reads past the subscription's cursors and moves them, in one transaction; rejects with ClientGone
   * (nothing consumed) if `abort` fired. A claim works as for MessageStore.take.
   */
  take(subscription: string, limit: number, abort: ClientSignal, claim?: DeliveryClaim): Promise<TakenStateObjects>;
  /** The current (not purged) objects matching the patterns, by sentinel, package and name (RequestStateObjects). */
  current(patterns: StateObjectPatterns): Promise<StateObject[]>;
  /** The earliest expiry not yet announced, in epoch ms. */
  nextExpiry(): Promise<number | undefined>;
  /** Removes tombstones every cursor has passed, and those older than `cutoffMs` whoever has not read them. */
  sweep(cutoffMs: number): Promise<number>;
}
