/**
 * Periodic housekeeping: idle subscriptions expire (idle time counts only while the hub runs), and each
 * log drops what every cursor has passed or what is past its retention. A sweep that meets another
 * process's write lock is skipped with a warning.
 *
 * On a store several processes share, one sweeps for all (the store says when it is another's turn, and
 * this process then trims nothing either), and each keeps its own waiting polls' subscriptions active:
 * every min(interval, idle/4) it touches those whose poll has waited more than half the idle time (the
 * others were touched when they registered), so a subscription whose poll waits here is never idle
 * longer than ¾ of the idle time to another process's sweep.
 */
import type { Logger } from 'pino';
import { isHubError } from '../../errors.js';
import type { MessageStore } from '../ports/messages.js';
import type { OtherProcesses } from '../ports/otherProcesses.js';
import type { StateObjectStore } from '../ports/stateObjects.js';
import type { SubscriptionStore } from '../ports/subscriptions.js';
import type { PackageLogs } from '../packages/packageLogs.js';
import type { PollRegistry } from './wakeUps.js';

export class Sweeper {
  private timer: NodeJS.Timeout | undefined;
  private keepTimer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private keeping: Promise<void> | undefined;

  constructor(
    private readonly subscriptions: SubscriptionStore,
    private readonly stateObjects: StateObjectStore,
    private readonly messages: MessageStore,
    private readonly notifier: PollRegistry,
    private readonly packageLogs: PackageLogs,
    private readonly logger: Logger,
    private readonly idleMs: number,
    private readonly intervalMs: number,
    private readonly retentionMs: number,
    /** Other processes sharing the store, whose sweeps must leave this process's waiting polls' subscriptions. */
    private readonly otherProcesses?: Pick<OtherProcesses, 'keepActive'>,
  ) {}

  /** Called once at start-up, before anything is served. */
  async discountDowntime(): Promise<void> {
    await this.subscriptions.discountDowntime(Date.now());
  }

  start(): void {
    this.timer = setInterval(() => {
      if (!this.running)
        this.running = this.sweep()
          .catch((error: unknown) => {
            if (isHubError(error, 'DatabaseBusy'))
              this.logger.warn('sweep skipped: another process holds the database write lock; trying again next time');
            else this.logger.error({ err: error }, 'sweep failed');
          })
          .finally(() => {
            this.running = undefined;
          });
    }, this.intervalMs);
    this.timer.unref();
    if (this.otherProcesses) {
      this.keepTimer = setInterval(
        () => {
          this.keeping ??= this.keepActive()
            .catch((error: unknown) => this.logger.warn({ err: error }, 'could not keep waiting subscriptions active'))
            .finally(() => (this.keeping = undefined));
        },
        Math.min(this.intervalMs, this.idleMs / 4),
      );
      this.keepTimer.unref();
    }
  }

  /** Several processes: this process's long-waiting polls' subscriptions are active now. */
  async keepActive(): Promise<void> {
    const now = Date.now();
    const ids = this.notifier.waitingSince(now - this.idleMs / 2);
    if (ids.length > 0) await this.otherProcesses?.keepActive(ids, now);
  }

  /** One sweep; nothing when another process sweeps now or did within half an interval. */
  async sweep(): Promise<void> {
    const now = Date.now();
    const expired = await this.subscriptions.sweep(now, now - this.idleMs, this.notifier.waitingIds(), this.intervalMs);
    if (!expired) return; // another process's turn: it trims the logs too
    for (const s of expired) {
      this.logger.info(
        { subscription: s.id, kind: s.kind, caller: s.friendlyName, credential: s.credentialName },
        'idle subscription expired',
      );
    }
    await this.stateObjects.sweep(now - this.retentionMs);
    await this.messages.sweep(now);
    await this.packageLogs.trim();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.keepTimer);
    await this.running;
    await this.keeping;
    await this.subscriptions.heartbeat(Date.now());
  }
}
