/**
 * One waiting poll's wait (the notifier's Waiter): woken, timed out, aborted by its client, or ended
 * (superseded by a newer poll of its key, or the hub closing). Kept small, since thousands wait at once.
 */
import type { ClientSignal } from './clientSignal.js';
import type { PollWaiter, WaitOutcome } from './wakeUps.js';

type Ending = 'superseded' | 'closing';

/** Timer callback shared by every waiter (no closure per wait). */
function timedOut(waiter: Waiter): void {
  waiter.finish('timeout');
}

/**
 * One waiting poll. Kept small, since thousands wait at once: no closures per wait — the abort signal
 * calls `handleEvent`, the timer a shared function with the waiter as its argument.
 */
export class Waiter implements PollWaiter {
  private signalled = false;
  private ended: Ending | undefined;
  private resolve: ((outcome: WaitOutcome) => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private abort: ClientSignal | undefined;

  /** Forget an earlier wake-up: called right before reading, so only later commits count. */
  clearSignal(): void {
    this.signalled = false;
  }

  signal(): void {
    this.signalled = true;
    this.finish('woken');
  }

  end(outcome: Ending): void {
    this.ended = outcome;
    this.finish(outcome);
  }

  /** The abort signal's listener. */
  handleEvent(): void {
    this.finish('aborted');
  }

  finish(outcome: WaitOutcome): void {
    const resolve = this.resolve;
    if (!resolve) return;
    this.resolve = undefined;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.abort?.removeEventListener('abort', this);
    this.abort = undefined;
    resolve(outcome);
  }

  /** Resolves on a wake-up (possibly one that came before the call), the timeout, abort, or end. */
  wait(ms: number, abort: ClientSignal): Promise<WaitOutcome> {
    if (this.ended) return Promise.resolve(this.ended);
    if (abort.aborted) return Promise.resolve('aborted');
    if (this.signalled) return Promise.resolve('woken');
    if (ms <= 0) return Promise.resolve('timeout');
    return new Promise((resolve) => {
      this.resolve = resolve;
      this.abort = abort;
      abort.addEventListener('abort', this, { once: true });
      this.timer = setTimeout(timedOut, ms, this);
    });
  }
}
