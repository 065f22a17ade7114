/**
 * Periodic housekeeping: idle subscriptions expire (time counts only while the hub runs: a heartbeat
 * records the last moment it was alive, and start-up moves every idle clock past the downtime),
 * orphan messages go, and package logs are trimmed to their retention.
 */
import type { Logger } from 'pino';
import type { Db } from '../db/open.js';
import { readHubSetting, writeHubSetting } from '../store/configuration.js';
import { deleteOrphanMessages } from '../store/messages.js';
import { deleteIdleSubscriptions, shiftSubscriptionActivity } from '../store/subscriptions.js';
import type { Notifier } from './notifier.js';
import type { PackageLogs } from './packageLogs.js';

const HEARTBEAT = 'heartbeat_ms';

export class Sweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly notifier: Notifier,
    private readonly packageLogs: PackageLogs,
    private readonly logger: Logger,
    private readonly idleMs: number,
    private readonly intervalMs: number,
  ) {}

  /** Called once at start-up, before anything is served. */
  async discountDowntime(): Promise<void> {
    const last = await readHubSetting(this.db, HEARTBEAT);
    const now = Date.now();
    if (last !== undefined && now > Number(last)) await shiftSubscriptionActivity(this.db, now - Number(last));
    await writeHubSetting(this.db, HEARTBEAT, String(now));
  }

  start(): void {
    this.timer = setInterval(() => {
      if (!this.running) this.running = this.sweep().catch((error) => this.logger.error({ err: error }, 'sweep failed')).finally(() => {
        this.running = undefined;
      });
    }, this.intervalMs);
    this.timer.unref();
  }

  async sweep(): Promise<void> {
    const now = Date.now();
    const expired = await this.db.transaction().execute(async (trx) => {
      await writeHubSetting(trx, HEARTBEAT, String(now));
      const ids = await deleteIdleSubscriptions(trx, now - this.idleMs, this.notifier.waitingIds());
      // Deliveries go with expired subscriptions and dropped queue entries: their messages go here.
      await deleteOrphanMessages(trx);
      return ids;
    });
    if (expired.length) this.logger.info({ count: expired.length }, 'idle subscriptions expired');
    await this.packageLogs.trim();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
    await writeHubSetting(this.db, HEARTBEAT, String(Date.now()));
  }
}
