/**
 * Announces StateObjects whose lifetime ran out, once each, to their subscribers. One timer, set for
 * the earliest pending expiry; objects stay readable with IsExpired until pushed again or purged.
 */
import type { StateObjectStore } from '../ports/stateObjects.js';
import type { ChangeAnnouncer } from './wakeUps.js';

export class ExpiryTimer {
  private timer: NodeJS.Timeout | undefined;
  private dueAt = Infinity;
  private stopped = false;
  private running: Promise<void> | undefined;

  constructor(
    private readonly store: StateObjectStore,
    private readonly notifier: ChangeAnnouncer,
    private readonly onError: (error: unknown) => void,
  ) {}

  async start(): Promise<void> {
    const next = await this.store.nextExpiry();
    if (next !== undefined) this.schedule(next);
  }

  schedule(atMs: number): void {
    if (this.stopped || atMs >= this.dueAt) return;
    clearTimeout(this.timer);
    this.dueAt = atMs;
    // setTimeout holds at most ~24.8 days; a later expiry is simply re-armed when it fires early.
    const delay = Math.min(Math.max(0, atMs - Date.now()), 2 ** 31 - 1);
    this.timer = setTimeout(() => {
      this.running = this.fire().catch(this.onError);
    }, delay);
    this.timer.unref();
  }

  private async fire(): Promise<void> {
    this.dueAt = Infinity;
    this.timer = undefined;
    if (this.stopped) return;
    for (const object of await this.store.expire(Date.now())) this.notifier.stateObjectChanged(object);
    const next = await this.store.nextExpiry();
    if (next !== undefined) this.schedule(next);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }
}
