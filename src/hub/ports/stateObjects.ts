/** The StateObject log's port: one sequence orders every change; subscriptions read it through a cursor per filter. */
import type { ClientSignal } from '../clientSignal.js';

export interface StateObjectKey {
  sentinelName: string;
  packageName: string;
  name: string;
}

/**
 * A StateObject filter as the wire gives it, over the four keys: `*` stands for any run of characters
 * (none included) and every other character, `?` and `[` too, for itself (src/wildcard.ts). Each engine
 * evaluates these in its own terms and gives stored filters back in this form.
 */
export interface StateObjectPatterns {
  sentinel: string;
  package: string;
  name: string;
  type: string;
}

/**
 * A StateObject as the store keeps it: value and metadatas as JSON text, times in epoch ms. (The field
 * names are the columns': an engine hands the rows it read to the wire records with no copy per row.)
 */
export interface StoredStateObject {
  sentinel_name: string;
  package_name: string;
  name: string;
  type: string;
  value: string;
  metadatas: string;
  last_update_ms: number;
  lifetime_s: number;
}

/** One object a poll returns: its latest value, or its purge. */
export interface StateObjectChange extends StateObjectKey {
  type: string;
  /** Unset when the object was purged (or is gone): the record goes out with `IsDeleted`. */
  current: StoredStateObject | undefined;
}

export interface StateObjectWrite extends StateObjectKey {
  type: string;
  /** JSON text. */
  value: string;
  /** JSON text. */
  metadatas: string;
  lastUpdateMs: number;
  lifetimeS: number;
  expiresAtMs: number | null;
}

/** A StateObject a commit changed (pushed, purged or expired): what the notifier matches filters against. */
export type ChangedStateObject = StateObjectKey & { type: string };

/** Each operation is one transaction whose promise settles after its COMMIT. */
export interface StateObjectStore {
  push(write: StateObjectWrite): Promise<void>;
  /** The producer's objects matching the name and type patterns become tombstones; returns them. */
  purge(producer: { sentinelName: string; packageName: string }, patterns: { name: string; type: string }): Promise<ChangedStateObject[]>;
  /** Announces objects whose lifetime ran out (a change in the log); returns them. */
  expire(now: number): Promise<ChangedStateObject[]>;
  /** Reads past the subscription's cursors and moves them, in one transaction; rejects with ClientGone (nothing consumed) if `abort` fired. */
  take(subscription: string, limit: number, abort: ClientSignal): Promise<StateObjectChange[]>;
  /** The current (not purged) objects matching the patterns, by sentinel, package and name (RequestStateObjects). */
  current(patterns: StateObjectPatterns): Promise<StoredStateObject[]>;
  /** The earliest expiry not yet announced, in epoch ms. */
  nextExpiry(): Promise<number | undefined>;
  /** Removes tombstones every cursor has passed, and those older than `cutoffMs` whoever has not read them. */
  sweep(cutoffMs: number): Promise<number>;
}
