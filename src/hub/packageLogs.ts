/** WriteLog: persisted, echoed to the hub's own log, readable and followable by administrators. */
import { EventEmitter, once } from 'node:events';
import type { Logger } from 'pino';
import type { Db } from '../db/open.js';
import type { PackageLogRow } from '../db/schema.js';
import { insertLog, queryLogs, trimLogs } from '../store/packageLogs.js';
import type { LogQuery } from '../store/packageLogs.js';
import type { Caller } from './caller.js';

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
  private readonly written = new EventEmitter();

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly retention: number,
  ) {
    this.written.setMaxListeners(0);
  }

  async write(caller: Caller, level: LogLevel, message: string): Promise<void> {
    await insertLog(this.db, {
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
    this.written.emit('log');
  }

  /**
   * Entries matching `query`. With `afterId` and a timeout, waits (long-poll) until an entry after the
   * cursor is written or the timeout passes: that is how a console follows the logs live.
   */
  async read(query: LogQuery, waitMs: number, abort: AbortSignal): Promise<LogRecord[]> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const listening = once(this.written, 'log', { signal: abort }).catch(() => undefined);
      const rows = await queryLogs(this.db, query);
      const remaining = deadline - Date.now();
      if (rows.length > 0 || query.afterId === undefined || remaining <= 0 || abort.aborted) {
        return rows.map(toRecord);
      }
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), remaining);
      });
      const outcome = await Promise.race([listening, timedOut]);
      clearTimeout(timer);
      if (outcome === 'timeout') return [];
    }
  }

  /** Keeps the newest `retention` entries (called by the sweeper). */
  trim(): Promise<number> {
    return trimLogs(this.db, this.retention);
  }
}
