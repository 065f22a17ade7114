/** The subscriptions' port: opening, finding and touching them, and their idle clocks (counted only while the hub runs). */
import type { MessageAddresses } from '../messageAddresses.js';
import type { DeliveryClaim } from './deliveryClaim.js';
import type { StateObjectPatterns } from './stateObjectPatterns.js';

export type SubscriptionKind = 'state_objects' | 'messages';

/** Whose subscription it is: the caller's ConnectionId and the credential it authenticated with. */
export interface SubscriptionOwner {
  connectionId: string;
  credentialName: string;
}

export interface OpenedSubscription {
  id: string;
  /** StateObject subscriptions: a filter was added (its first poll has news). */
  added: boolean;
}

/** What a subscription's waiting poll listens for: its filters, or its message addresses. */
export type SubscriptionInterest =
  { kind: 'state_objects'; filters: StateObjectPatterns[] } | { kind: 'messages'; addresses: MessageAddresses };

export interface ExpiredSubscription {
  id: string;
  kind: string;
  credentialName: string;
  friendlyName: string;
}

/** Each operation is one transaction whose promise settles after its COMMIT. */
export interface SubscriptionStore {
  /** Opens (or reuses) the owner's subscription and adds the filter, unless it has it already. */
  openStateObjects(
    owner: SubscriptionOwner,
    requestedId: string | undefined,
    filter: StateObjectPatterns,
  ): Promise<OpenedSubscription>;
  openMessages(owner: SubscriptionOwner, requestedId: string | undefined, group?: string): Promise<OpenedSubscription>;
  /**
   * The owner's subscription of that kind with what a poll of it listens for (touched), or undefined.
   * With the poll's `claim` (its first read), an engine this process owns (SQLite) may end in the same
   * write a pending delivery the claim judges `delivered` (deliveryClaim.ts): one whose answer was
   * written, which the poll's take would read on past.
   */
  findOwned(
    owner: SubscriptionOwner,
    id: string,
    kind: SubscriptionKind,
    claim?: DeliveryClaim,
  ): Promise<SubscriptionInterest | undefined>;
  touched(id: string): Promise<void>;
  /**
   * Deletes the owner's subscriptions among `ids` (their client ended them: a SignalR connection's
   * two), except any used at or after `usedSince` (epoch ms; another process serves them now). Someone
   * else's are left. Says how many went.
   */
  removeOwned(owner: SubscriptionOwner, ids: string[], usedSince?: number): Promise<number>;
  /**
   * Settles the subscription's pending delivery if `token` is still the pending one: `written`, it is
   * consumed; otherwise its cursors go back to before it, so the next take reads it again.
   */
  settle(id: string, token: string, written: boolean): Promise<void>;
  /** Start-up: moves every subscription's idle clock forward by the time since the last heartbeat, and records one. */
  discountDowntime(now: number): Promise<void>;
  /**
   * Records the heartbeat and removes subscriptions idle since before `idleCutoff`, except `keep` (those
   * with a poll waiting in this process). With several processes on the store, one sweeps for all:
   * undefined, doing nothing, while another sweeps or when one swept less than `everyMs / 2` ago.
   */
  sweep(now: number, idleCutoff: number, keep: string[], everyMs: number): Promise<ExpiredSubscription[] | undefined>;
  /** Records the last moment the hub was alive. */
  heartbeat(now: number): Promise<void>;
}

/**
 * How the pending delivery of an answer written whole ends (hub/polls/deliveries.ts), which depends on
 * who else uses the store:
 * - `byNextPoll`: this process is the store's only user. Nothing is written per answer: the next poll
 *   of its subscription ends it, or a graceful shutdown does (`consumeWritten`: every pending delivery
 *   whose token starts with `life` but is not one of `unsettled`, as consumed); a pending delivery of
 *   an earlier life of the process is read again at once.
 * - `byOwnWrite`: other processes may judge it without this one's memory, so each written answer is
 *   settled by a write of its own (SubscriptionStore.settle); another process's pending delivery is
 *   waited for a while, then read again.
 */
export type DeliverySettling =
  | { readonly kind: 'byNextPoll'; consumeWritten(life: string, unsettled: string[]): Promise<void> }
  | { readonly kind: 'byOwnWrite' };
