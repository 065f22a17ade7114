/** WriteLog: persisted, echoed to the hub's own log, readable and followable by administrators. */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { ClientSignal } from '../polls/clientSignal.js';
import type { LogLevel, LogQuery, PackageLogEntry, PackageLogStore } from '../ports/packageLogs.js';
import type { Caller } from '../access/caller.js';
import { longPoll } from '../polls/longPoll.js';
import type { WakeUps } from '../polls/wakeUps.js';

// A Map, not an object literal: `level=constructor` must miss, not find Object.prototype's member.
const LOG_LEVELS = new Map<string, LogLevel>([
  ['info', 'Info'],
  ['warn', 'Warn'],
  ['warning', 'Warn'],
  ['error', 'Error'],
]);

/** The one reading of a level a request names: Info, Warn or Error in any case (`Warning` too, for Warn); undefined otherwise. */
export const parseLogLevel = (text: string): LogLevel | undefined => LOG_LEVELS.get(text.toLowerCase());

export interface LogRecord {
  Id: number;
  SentinelName: string;
  PackageName: string;
  Level: LogLevel;
  Message: string;
  Date: string;
}

const toRecord = (e: PackageLogEntry): LogRecord => ({
  Id: e.id,
  SentinelName: e.sentinelName,
  PackageName: e.packageName,
  Level: e.level,
  Message: e.message,
  Date: new Date(e.loggedMs).toISOString(),
});

export class PackageLogs {
  constructor(
    private readonly store: PackageLogStore,
    private readonly notifier: WakeUps,
    private readonly logger: Logger,
    private readonly retention: number,
  ) {}

  async write(caller: Caller, level: LogLevel, message: string): Promise<void> {
    await this.store.write({
      sentinelName: caller.sentinelName,
      packageName: caller.packageName,
      level,
      message,
      loggedMs: Date.now(),
    });
    const log = { sentinel: caller.sentinelName, package: caller.packageName, packageLog: true };
    if (level === 'Error') this.logger.error(log, message);
    else if (level === 'Warn') this.logger.warn(log, message);
    else this.logger.info(log, message);
    this.notifier.logWritten();
  }

  /** Entries matching `query`. */
  async read(query: LogQuery): Promise<LogRecord[]> {
    return (await this.store.read(query)).map(toRecord);
  }

  /**
   * Entries matching `query`; with `afterId` and a timeout, waits (the same long-poll as subscriptions)
   * until an entry after the cursor is written or the timeout passes: how a console follows the logs.
   * Resolves with [] when the client went away.
   */
  async follow(query: LogQuery, waitMs: number, abort: ClientSignal): Promise<LogRecord[]> {
    if (query.afterId === undefined || waitMs <= 0) return this.read(query);
    const key = `logs:${randomUUID()}`;
    return (
      (await longPoll(this.notifier, key, this.notifier.register(key, { kind: 'logs' }), waitMs, abort, {
        take: () => this.read(query),
      })) ?? []
    );
  }

  /** Keeps the newest `retention` entries (called by the sweeper). */
  trim(): Promise<number> {
    return this.store.trim(this.retention);
  }
}
