import { ClientGone } from '../../errors.js';
import type { ClientSignal } from './clientSignal.js';
import type { PollRegistry, PollWaiter } from './wakeUps.js';

/** What a long-poll does besides waiting (one object rather than three closures: thousands wait at once). */
export interface PollSteps<T> {
  /** Reads and consumes in one transaction; throws ClientGone (rolling back) if the client has gone. */
  take(): Promise<T[]>;
  /** Runs with the result while the waiter is still registered. */
  settle?(result: T[] | undefined): Promise<void>;
  /** Called last however the poll ends. */
  end?(): void;
}

/**
 * The one way the hub waits: StateObject and message polls and the management logs follow. Holds a
 * poll until its `take` step finds something or `timeoutMs` passes. The waiter is registered before the first
 * read so a commit between read and wait is not missed, and released however the poll ends (nothing is
 * left behind on a timeout). `take` consumes inside its transaction and throws ClientGone (rolling
 * back) if the client has gone, so nothing is consumed for a response that will not be sent. `settle`
 * runs with the result while the waiter is still registered (the idle sweeper leaves a subscription
 * with a waiter alone). Returns undefined when the client went away.
 */
export async function longPoll<T>(
  notifier: PollRegistry,
  key: string,
  /**
   * From `notifier.register(key, interest)`, called by the caller right before (the interest is not
   * held while waiting), or a promise of it when the caller checks something first: a poll refused
   * there (rejected) holds and releases nothing, and calls no step.
   */
  registered: PollWaiter | Promise<PollWaiter>,
  timeoutMs: number,
  abort: ClientSignal,
  steps: PollSteps<T>,
): Promise<T[] | undefined> {
  const waiter = await registered;
  const deadline = Date.now() + timeoutMs;
  try {
    let result: T[] | undefined;
    for (;;) {
      if (abort.aborted) break;
      waiter.clearSignal();
      try {
        result = await steps.take();
      } catch (error) {
        if (error instanceof ClientGone) break;
        throw error;
      }
      if (result.length > 0) break;
      const outcome = await waiter.wait(deadline - Date.now(), abort);
      if (outcome === 'aborted') {
        result = undefined;
        break;
      }
      if (outcome !== 'woken') break;
    }
    if (steps.settle) await steps.settle(result);
    return result;
  } finally {
    notifier.release(key, waiter);
    steps.end?.();
  }
}
