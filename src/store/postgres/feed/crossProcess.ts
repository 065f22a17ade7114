/**
 * Wake-ups across hub processes on one PostgreSQL (issue 22): this process's listening connection
 * (listener.ts) and tail reader (tailReader.ts) feed what other processes committed to this process's
 * in-memory notifier, through the same announcements its own writes make after their commits. A
 * notification only says "read"; the tail reader reads the logs above this process's cursors on each
 * one, on a fallback timer and after every reconnection, so a lost notification delays a wake-up by at
 * most the fallback interval and never loses it. A change this process made itself comes back too and
 * would wake nobody new (its polls were woken at its commit): with `own` its doorbell only moves the
 * tail reader's cursors over it (ownCommits.ts), without reading it back. A process where no poll waits
 * reads nothing on a doorbell: its cursor moves to the head the doorbell names. The same listener
 * carries the polls' own notices (pollsElsewhere.ts: a newer poll of a subscription on another process,
 * a filter added there).
 */
import { Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import type { PostgresConnectionOptions } from '../connections/pool.js';
import { createPool } from '../connections/pool.js';
import { sentMessageOf, stateObjectChangeOf } from '../../rows.js';
import type { CommitsElsewhere } from '../../settings.js';
import type { NotificationHandler } from './listener.js';
import type { OwnCommits } from './ownCommits.js';
import { doorbell } from './ownCommits.js';
import { HUB_CHANNEL, PostgresListener } from './listener.js';
import { TailReader } from './tailReader.js';
import { PostgresPollsElsewhere } from './pollsElsewhere.js';

export interface CrossProcessWakeUpsOptions extends Omit<PostgresConnectionOptions, 'role'> {
  /** The notifier: what other processes committed, and their polls' claims (none waiting: a doorbell reads nothing). */
  announce: CommitsElsewhere;
  /** The tail reader's fallback interval (HUB_PG_POLL_MS); default 1 s. */
  fallbackMs?: number;
  /**
   * Lags in ms, for the metrics: a notification's, from its sending (the time in its payload) to its
   * arrival; the tail reader's, from that sending to the end of the read it caused.
   */
  lags?: { notification(ms: number): void; tailRead(ms: number): void };
  heartbeatMs?: number;
  firstBackoffMs?: number;
  /** What this process's stores committed (the same object they record into): not read back. */
  own?: OwnCommits;
}

export interface CrossProcessWakeUps {
  listener: PostgresListener;
  tail: TailReader;
  /** This process's polls' notices to the others (hub/polls/wakeUps.ts PollsElsewhere). */
  polls: PostgresPollsElsewhere;
  /**
   * Hears every process's NOTIFY on `channel` (this one's too) from now on, across reconnections:
   * resolves once listened on. Each kind of cross-process notice has a channel of its own.
   */
  listen(channel: string, handler: NotificationHandler): Promise<void>;
  stop(): Promise<void>;
}

/** Starts listening (resolves once LISTEN is in place and the tail reader knows where the logs end). */
export async function startCrossProcessWakeUps(options: CrossProcessWakeUpsOptions): Promise<CrossProcessWakeUps> {
  const { announce } = options;
  // The tail reader's reads (one at a time), the poll claims (one batch at a time), a changed subscription's notice.
  const pool = createPool({ ...options, role: 'tail', max: 3 });
  const tail = new TailReader({
    db: pool,
    log: options.log,
    fallbackMs: options.fallbackMs,
    own: options.own,
    handlers: {
      stateObjects: (rows) => {
        for (const r of rows) announce.stateObjectChanged(stateObjectChangeOf(r));
      },
      messages: (rows) => {
        for (const r of rows) announce.messageSent(sentMessageOf(r));
      },
      packageLogs: (rows) => {
        if (rows.length > 0) announce.logWritten();
      },
    },
  });
  await tail.start();
  const polls = new PostgresPollsElsewhere(pool, options.log, (key, order) => announce.claimedElsewhere(key, order));
  const listener = new PostgresListener({
    ...options,
    channels: {
      [HUB_CHANNEL]: (payload) => {
        const { sentMs, log, head } = doorbell(payload);
        if (options.lags && sentMs > 0) options.lags.notification(Date.now() - sentMs);
        // No poll waits here: the rows would wake nobody, and a poll registered later reads them itself.
        if (log && head !== undefined && announce.waitingCount === 0) return void tail.pass(log, head);
        // This process's own commits: nothing to read back (its polls were woken at the COMMIT).
        if (options.own?.isOwn(payload)) return void tail.ownHint();
        const read = tail.hint(log ? [log] : undefined);
        if (options.lags && sentMs > 0) void read.then(() => options.lags?.tailRead(Date.now() - sentMs));
      },
      ...polls.channels,
    },
    onReady: () => void tail.hint(),
  });
  await listener.start();
  return {
    listener,
    tail,
    polls,
    listen: (channel, handler) => listener.listen(channel, handler),
    stop: async () => {
      await listener.stop();
      await tail.stop();
      await pool.end();
    },
  };
}

/** This process's cross-process feed in its metrics: listener up, its reconnections, the tail reader's reads. */
export function registerCrossProcessMetrics(registry: Registry, feed: CrossProcessWakeUps): void {
  new Gauge({
    name: 'hub_postgres_listener_up',
    help: "1 while this process listens for other processes' commits (LISTEN hub), 0 while it reconnects",
    registers: [registry],
    collect() {
      this.set(feed.listener.connected ? 1 : 0);
    },
  });
  new Gauge({
    name: 'hub_postgres_listener_reconnects',
    help: 'Listening connections lost (and replaced) since this process started',
    registers: [registry],
    collect() {
      this.set(feed.listener.reconnects);
    },
  });
  new Gauge({
    name: 'hub_postgres_tail_reads',
    help: "Reads of the logs above this process's cursors (on a notification, the fallback timer or a reconnection)",
    registers: [registry],
    collect() {
      this.set(feed.tail.reads);
    },
  });
}
