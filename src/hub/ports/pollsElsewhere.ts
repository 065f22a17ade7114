/**
 * The port of a store that several hub processes share (PostgreSQL: store/postgres/feed/pollsElsewhere.ts):
 * what one process's polls tell the others'. A store of one process (SQLite) has none.
 */
import type { SubscriptionKind, SubscriptionOwner } from './subscriptions.js';

/** What a subscription listens for changed (a filter or group added, committed) on some process. */
export interface InterestChange {
  id: string;
  kind: SubscriptionKind;
  owner: SubscriptionOwner;
}

/**
 * Several hub processes on one store: the notices that keep "one poll per subscription" and "a filter
 * added while the poll waits" true when the poll waits on another process. Each is a hint: lost, the
 * older poll waits to its timeout, or the poll listens for the old filters until its next poll.
 */
export interface PollsElsewhere {
  /** Orders a poll of `key` registered here after every earlier one on any process, and tells them all (`claimedElsewhere`). */
  claim(key: string): Promise<number>;
  /** Tells the other processes, after the commit, that what `change.id` listens for changed. */
  changed(change: InterestChange): void;
  /** Where the other processes' `changed` notices go (set once, before any poll). */
  onChanged(hear: (change: InterestChange) => void): void;
}
