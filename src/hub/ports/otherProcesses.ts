/**
 * What a store that several hub processes may share (behind a load balancer) lets one process tell the
 * others and hear from them. A store of one process has none (OpenedStore.otherProcesses).
 */
import type { AuthFailureStore } from './authFailures.js';
import type { PollsElsewhere } from './pollsElsewhere.js';

export interface OtherProcesses {
  /** What this process's polls tell the others' (one poll per subscription, a filter added). */
  readonly polls: PollsElsewhere;
  /** Failed authentications counted across every process. */
  readonly authFailures: AuthFailureStore;
  /**
   * Hears every address any process saw reach the failed-authentication limit (AuthFailureStore
   * `announceBlocked`) from now on; resolves once listening.
   */
  onAddressBlocked(hear: (address: string) => void): Promise<void>;
  /**
   * The subscriptions `ids`, whose polls wait in this process, are active at `now`, so that another
   * process's sweep leaves them (one statement).
   */
  keepActive(ids: string[], now: number): Promise<void>;
}
