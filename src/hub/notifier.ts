/**
 * Wake-after-commit: one waiter per subscription, woken by the commit of a write that concerns it.
 * Knows nothing of HTTP or SQL; a PostgreSQL deployment could feed `wake` from LISTEN/NOTIFY.
 */
export type WaitOutcome = 'woken' | 'timeout' | 'superseded' | 'aborted' | 'closing';

type Ending = 'superseded' | 'closing';

export class Waiter {
  private signalled = false;
  private ended: Ending | undefined;
  private settle: ((outcome: WaitOutcome) => void) | undefined;

  /** Forget an earlier wake-up: called right before reading, so only later commits count. */
  clearSignal(): void {
    this.signalled = false;
  }

  signal(): void {
    this.signalled = true;
    this.settle?.('woken');
  }

  end(outcome: Ending): void {
    this.ended = outcome;
    this.settle?.(outcome);
  }

  /** Resolves on a wake-up (possibly one that came before the call), the timeout, abort, or end. */
  wait(ms: number, abort: AbortSignal): Promise<WaitOutcome> {
    if (this.ended) return Promise.resolve(this.ended);
    if (abort.aborted) return Promise.resolve('aborted');
    if (this.signalled) return Promise.resolve('woken');
    if (ms <= 0) return Promise.resolve('timeout');
    return new Promise((resolve) => {
      const onAbort = () => this.settle?.('aborted');
      const timer = setTimeout(() => this.settle?.('timeout'), ms);
      abort.addEventListener('abort', onAbort, { once: true });
      this.settle = (outcome) => {
        this.settle = undefined;
        clearTimeout(timer);
        abort.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
    });
  }
}

export class Notifier {
  private readonly waiters = new Map<string, Waiter>();

  /** Registers the waiter of a subscription; an older waiter of the same subscription is superseded. */
  register(subscriptionId: string): Waiter {
    this.waiters.get(subscriptionId)?.end('superseded');
    const waiter = new Waiter();
    this.waiters.set(subscriptionId, waiter);
    return waiter;
  }

  release(subscriptionId: string, waiter: Waiter): void {
    if (this.waiters.get(subscriptionId) === waiter) this.waiters.delete(subscriptionId);
  }

  /** Call only after the commit that the woken subscriptions will read. */
  wake(subscriptionIds: Iterable<string>): void {
    for (const id of subscriptionIds) this.waiters.get(id)?.signal();
  }

  /** Shutdown: every waiting poll answers now. */
  endAll(): void {
    for (const waiter of this.waiters.values()) waiter.end('closing');
  }

  isWaiting(subscriptionId: string): boolean {
    return this.waiters.has(subscriptionId);
  }

  waitingIds(): string[] {
    return [...this.waiters.keys()];
  }

  get waitingCount(): number {
    return this.waiters.size;
  }
}
