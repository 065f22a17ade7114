/** The subscriptions' port: opening, finding and touching them, and their idle clocks (counted only while the hub runs). */
import type { MessageAddresses } from '../messageAddresses.js';
import type { StateObjectPatterns } from './stateObjects.js';

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
  /** The owner's subscription of that kind with what a poll of it listens for (touched), or undefined. */
  findOwned(owner: SubscriptionOwner, id: string, kind: SubscriptionKind): Promise<SubscriptionInterest | undefined>;
  touched(id: string): Promise<void>;
  /** Start-up: moves every subscription's idle clock forward by the time since the last heartbeat, and records one. */
  discountDowntime(now: number): Promise<void>;
  /** Records the heartbeat and removes subscriptions idle since before `idleCutoff`, except `keep` (those with a waiting poll). */
  sweep(now: number, idleCutoff: number, keep: string[]): Promise<ExpiredSubscription[]>;
  /** Records the last moment the hub was alive. */
  heartbeat(now: number): Promise<void>;
}
