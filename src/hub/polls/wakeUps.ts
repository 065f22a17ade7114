/**
 * Wake-after-commit as the hub modules see it: a writer announces what its commit changed
 * (ChangeAnnouncer); a long-poll registers what it listens for and waits (PollRegistry, PollWaiter).
 * Which polls a change concerns is the implementation's business (hub/polls/notifier.ts, named only by createHub).
 * With several processes on one store, PollsElsewhere (ports/pollsElsewhere.ts) carries what one
 * process's polls must tell the others'; with one process there is none.
 */
import type { ClientSignal } from './clientSignal.js';
import type { SentMessage } from '../messageAddresses.js';
import type { StateObjectChange } from '../ports/stateObjects.js';
import type { SubscriptionInterest } from '../ports/subscriptions.js';

/** What a waiting poll listens for: a subscription's filters or message addresses, or the package logs. */
export type PollInterest = SubscriptionInterest | { kind: 'logs' };

/** How a wait ended. */
export type WaitOutcome = 'woken' | 'timeout' | 'superseded' | 'aborted' | 'closing';

/** Announcements, each made only after the commit it reports on. */
export interface ChangeAnnouncer {
  /** True when it woke a waiting poll. */
  stateObjectChanged(object: StateObjectChange): boolean;
  /** True when it woke a waiting poll. */
  messageSent(message: SentMessage): boolean;
  logWritten(): void;
  /** These subscriptions have news whatever they listen for (a filter was added to them). */
  wake(keys: Iterable<string>): void;
  /**
   * Resolves once the polls woken so far have read and answered (as far as that happens in this turn):
   * a writer whose announcement woke someone awaits it before answering its own client.
   */
  wokenAnswered(): Promise<void>;
}

/** One registered poll's wait. */
export interface PollWaiter {
  /** Forgets an earlier wake-up: called right before reading, so only later commits count. */
  clearSignal(): void;
  /** Resolves on a wake-up (possibly one that came before the call), the timeout, abort, or shutdown. */
  wait(ms: number, abort: ClientSignal): Promise<WaitOutcome>;
}

/** The polls waiting now, one per key (a subscription's id, or a logs follower's). */
export interface PollRegistry {
  /** Registers the key's poll (an earlier one of the same key is superseded). */
  register(key: string, interest: PollInterest): PollWaiter;
  /** What the key's waiting poll listens for changed (a filter or group was added). */
  update(key: string, interest: PollInterest): void;
  /** The poll ended; a later poll of the same key that superseded it stays. */
  release(key: string, waiter: PollWaiter): void;
  /**
   * Several processes: `order` places the key's poll `waiter` among every process's polls of the key
   * (PollsElsewhere.claim); a later claim elsewhere (`claimedElsewhere`) supersedes it.
   */
  ordered(key: string, waiter: PollWaiter, order: number): void;
  /**
   * Several processes: a poll of `key` was given `order` somewhere (this process's own claims included):
   * this process's poll of it ends 'superseded' if it is older, now or once its own order is known.
   */
  claimedElsewhere(key: string, order: number): void;
  isWaiting(key: string): boolean;
  waitingIds(): string[];
  /** How many polls wait in this process now. */
  readonly waitingCount: number;
  /** The keys whose poll has waited since before `since` (epoch ms): the others were touched at registration. */
  waitingSince(since: number): string[];
}

/** Both sides, for a module that announces and waits (subscriptions, package logs). */
export interface WakeUps extends ChangeAnnouncer, PollRegistry {}
