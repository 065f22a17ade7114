/** WriteLog: persisted, echoed to the hub's own log, readable and followable by administrators. */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Db } from '../db/open.js';
import type { PackageLogRow } from '../db/schema.js';
import type { PackageLogStore } from '../store/packageLogs.js';
import { queryLogs, trimLogs } from '../store/packageLogs.js';
import type { LogQuery } from '../store/packageLogs.js';
import type { Caller } from './caller.js';
import { longPoll } from './longPoll.js';
import type { Notifier } from './notifier.js';

export type LogLevel = PackageLogRow['level'];

export interface LogRecord {
  Id: number;
  SentinelName: string;
  PackageName: string;
  Level: LogLevel;
  Message: string;
  Date: string;
}

const toRecord = (r: PackageLogRow): LogRecord => ({
  Id: r.id,
  SentinelName: r.sentinel_name,
  PackageName: r.package_name,
  Level: r.level,
  Message: r.message,
  Date: new Date(r.logged_ms).toISOString(),
});

export class PackageLogs {
  constructor(
    private readonly db: Db,
    private readonly store: PackageLogStore,
    private readonly notifier: Notifier,
    private readonly logger: Logger,
    private readonly retention: number,
  ) {}

  async write(caller: Caller, level: LogLevel, message: string): Promise<void> {
    await this.store.write({
      sentinel_name: caller.sentinelName,
      package_name: caller.packageName,
      level,
      message,
      logged_ms: Date.now(),
    });
    const log = { sentinel: caller.sentinelName, package: caller.packageName, packageLog: true };
    if (level === 'Error') this.logger.error(log, message);
    else if (level === 'Warn') this.logger.warn(log, message);
    else this.logger.info(log, message);
    this.notifier.logWritten();
  }

  /**
   * Entries matching `query`. With `afterId` and a timeout, waits (the same long-poll as subscriptions)
   * until an entry after the cursor is written or the timeout passes: how a console follows the logs.
   */
  async read(query: LogQuery, waitMs: number, abort: AbortSignal): Promise<LogRecord[]> {
    const read = async () => (await queryLogs(this.db, query)).map(toRecord);
    if (query.afterId === undefined || waitMs <= 0) return read();
    const key = `logs:${randomUUID()}`;
    return (await longPoll(this.notifier, key, this.notifier.register(key, { kind: 'logs' }), waitMs, abort, read)) ?? [];
  }

  /** Keeps the newest `retention` entries (called by the sweeper). */
  trim(): Promise<number> {
    return trimLogs(this.db, this.retention);
  }
}
