/**
 * A process's tail reader (issue 22): what other processes committed, read from the database above
 * this process's own cursor per log and handed to its in-memory notifier (which decides whom to wake;
 * a poll still reads its answer from the committed rows, so a duplicate or spurious hand-over costs an
 * empty read, never a wrong answer).
 *
 * It reads on every hint (a notification: the log it names, or every log), on a fallback timer (a lost notification, a listener that
 * stopped hearing), and after every (re)connection of the listener (`PostgresListener.onReady`: what
 * was committed while it was down). Reads never overlap: a hint during a read makes one more read after
 * it. Log numbers are gap-free in commit order (logs.ts), so `> cursor` never skips: the cursor moves to
 * the last number read. It starts at the heads when it starts: what came before is not news to waiters
 * registered after.
 *
 * With `own` (ownCommits.ts), what this process committed itself is not read back: its own doorbell
 * (`ownHint`) moves the cursors over its recorded ranges, and reads only when a range lies above a gap.
 *
 * `pass` moves a cursor to a head a doorbell names without reading, for a process where no poll waits:
 * the rows would wake nobody, and a poll registered afterwards reads its answer from the database,
 * committed up to that head before the doorbell rang.
 *
 * A read that fails (the database unreachable) is logged and retried at the next hint, timer or
 * reconnection; the cursors stay where they were.
 */
import type { LogName, Queryable } from '../connections/logs.js';
import { LOG_NAMES, logHeads } from '../connections/logs.js';
import type { OwnCommits } from './ownCommits.js';
import type { PostgresLog } from '../connections/pool.js';
import type { SentMessageRow, StateObjectChangeRow } from '../../rows.js';

/** What changed in the StateObject log: the object's identity and state, not its value. */
export interface ChangedStateObjectKey extends StateObjectChangeRow {
  seq: number;
  is_deleted: boolean;
  expires_at_ms: number | null;
}

/** A message of the log: who sent it and to whom (its scope and args), not its data. */
export type SentMessageKey = SentMessageRow;

export interface PackageLogKey {
  id: number;
  sentinel_name: string;
  package_name: string;
}

export interface TailHandlers {
  stateObjects(rows: ChangedStateObjectKey[]): void;
  messages(rows: SentMessageKey[]): void;
  packageLogs(rows: PackageLogKey[]): void;
}

export interface TailReaderOptions {
  /** The pool reads go through. */
  db: Queryable;
  handlers: TailHandlers;
  /** The fallback read's interval (HUB_PG_POLL_MS); default 1 s. */
  fallbackMs?: number;
  /** Rows per statement; a full page reads again at once. Default 1,000. */
  pageSize?: number;
  log: PostgresLog;
  /** This process's own commits: not read back (see the file's comment). */
  own?: OwnCommits;
}

const LOGS = LOG_NAMES;

const READS: Record<LogName, string> = {
  state_objects: `select seq, sentinel_name, package_name, name, type, is_deleted, expires_at_ms
                  from state_objects where seq > $1 order by seq limit $2`,
  messages: `select id, sender_connection_id, scope, args from messages where id > $1 order by id limit $2`,
  package_logs: `select id, sentinel_name, package_name from package_logs where id > $1 order by id limit $2`,
};

export class TailReader {
  #cursors: Record<LogName, number> | undefined;
  #reading: Promise<void> | undefined;
  /** The logs a hint asked for since the current read took its list. */
  readonly #pending = new Set<LogName>();
  #timer: NodeJS.Timeout | undefined;
  #reads = 0;
  readonly #options: TailReaderOptions;

  constructor(options: TailReaderOptions) {
    this.#options = options;
  }

  /** Takes the current heads as the cursors and starts the fallback timer. */
  async start(): Promise<void> {
    this.#cursors ??= await logHeads(this.#options.db);
    this.#timer ??= setInterval(() => void this.hint(), this.#options.fallbackMs ?? 1_000);
    this.#timer.unref();
  }

  stop(): Promise<void> {
    clearInterval(this.#timer);
    return this.#reading ?? Promise.resolve();
  }

  /** Where it has read to in each log (a copy). */
  get cursors(): Record<LogName, number> | undefined {
    return this.#cursors && { ...this.#cursors };
  }

  /** Reads completed (each reads the logs asked for once or more): a metric. */
  get reads(): number {
    return this.#reads;
  }

  /**
   * Something may have been committed to `logs` (by default any): read them (now, or once more after
   * the read in progress). A doorbell names the log its commit wrote to.
   */
  hint(logs: readonly LogName[] = LOGS): Promise<void> {
    for (const log of logs) this.#pending.add(log);
    if (this.#reading) return this.#reading;
    this.#reading = (async () => {
      try {
        while (this.#pending.size > 0) {
          const asked = LOGS.filter((log) => this.#pending.has(log));
          this.#pending.clear();
          await this.#readAll(asked);
        }
      } finally {
        this.#reading = undefined;
      }
    })();
    return this.#reading;
  }

  /**
   * This process's own doorbell: its cursors move over what it committed itself; a read only if
   * something it did not record lies below. A read under way moves them at its end (what another
   * process committed after its snapshot rings a doorbell of its own).
   */
  ownHint(): Promise<void> {
    if (this.#reading) return this.#reading;
    if (!this.#cursors || this.#skipOwn()) return this.hint();
    return Promise.resolve();
  }

  /**
   * Every number of `log` up to `head` is committed and nobody here waits for it: the cursor moves there
   * unread (and over this process's own ranges right above). During a read, or before the cursors are
   * known, it reads instead (a read sets the cursor to what it read, which must not move it back).
   */
  pass(log: LogName, head: number): Promise<void> {
    if (this.#reading || !this.#cursors) return this.hint([log]);
    this.#cursors[log] = Math.max(this.#cursors[log], head);
    this.#skipOwn();
    return Promise.resolve();
  }

  /** The cursors moved over this process's own ranges right above them; true if a gap is left. */
  #skipOwn(): boolean {
    const { own } = this.#options;
    const cursors = this.#cursors;
    if (!own || !cursors) return false;
    let gap = false;
    for (const log of LOGS) {
      const skipped = own.skip(log, cursors[log]);
      cursors[log] = skipped.cursor;
      gap ||= skipped.gap;
    }
    return gap;
  }

  async #readAll(logs: readonly LogName[]): Promise<void> {
    if (!this.#cursors) {
      try {
        this.#cursors = await logHeads(this.#options.db);
      } catch (error) {
        this.#options.log.warn(
          { err: (error as Error).message },
          'PostgreSQL tail reader could not read the log heads',
        );
      }
      return;
    }
    const { handlers } = this.#options;
    try {
      if (logs.includes('state_objects'))
        await this.#readLog('state_objects', (rows) =>
          handlers.stateObjects(rows as unknown as ChangedStateObjectKey[]),
        );
      if (logs.includes('messages'))
        await this.#readLog('messages', (rows) => handlers.messages(rows as unknown as SentMessageKey[]));
      if (logs.includes('package_logs'))
        await this.#readLog('package_logs', (rows) => handlers.packageLogs(rows as unknown as PackageLogKey[]));
      this.#reads += 1;
      this.#skipOwn();
    } catch (error) {
      this.#options.log.warn(
        { err: (error as Error).message },
        'PostgreSQL tail reader could not read: retrying at the next hint',
      );
    }
  }

  async #readLog(log: LogName, hand: (rows: Record<string, unknown>[]) => void): Promise<void> {
    const cursors = this.#cursors!;
    const pageSize = this.#options.pageSize ?? 1_000;
    for (;;) {
      const { rows } = await this.#options.db.query<Record<string, unknown>>({
        name: `hub_tail_${log}`,
        text: READS[log],
        values: [cursors[log], pageSize],
      });
      if (rows.length === 0) return;
      cursors[log] = Number(rows[rows.length - 1][log === 'state_objects' ? 'seq' : 'id']);
      hand(rows);
      if (rows.length < pageSize) return;
    }
  }
}
