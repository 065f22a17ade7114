/**
 * What this process committed to the logs itself, so that its tail reader (tailReader.ts) need not read
 * it back: its own commits were announced to its notifier at their COMMIT already. The stores record
 * the numbers each group commit took (after its COMMIT, never before: a rolled-back write gives its
 * numbers back to other writers); the doorbell they ring carries this process's token, so the listener
 * knows its own.
 *
 * The tail reader moves its cursor over a recorded range only when the range starts right above it:
 * numbers are gap-free in commit order (logs.ts), so everything below the range is then read already,
 * and no other process's commit is skipped. A range above a gap (another process's commit not read
 * yet, a purge or an expiry, which record nothing) waits for a read, which reads it back as before.
 *
 * The doorbell also carries this process's head of the log it names: the highest number it recorded
 * (after its COMMIT), so every number up to it is committed. A process where no poll waits moves its
 * cursor there without reading (crossProcess.ts).
 */
import { randomUUID } from 'node:crypto';
import type { LogName } from '../connections/logs.js';
import { LOG_NAMES } from '../connections/logs.js';

/** Ranges kept per log at most: past it (a gap nobody reads), the oldest go and are read back instead. */
const MAX_RANGES = 10_000;

export class OwnCommits {
  /** In every doorbell this process rings: `<sent epoch ms> <token> <log> <head>`. */
  readonly #token = randomUUID();
  readonly #ranges: Record<LogName, [number, number][]> = { state_objects: [], messages: [], package_logs: [] };
  /** The highest number of each log this process committed (0: none yet). */
  readonly #heads: Record<LogName, number> = { state_objects: 0, messages: 0, package_logs: 0 };

  /**
   * The doorbell of a commit to `log`: its sending time (for the lag metrics), this process's token, the
   * log and this process's head of it.
   */
  payload(log: LogName): string {
    return `${Date.now()} ${this.#token} ${log} ${this.#heads[log]}`;
  }

  /** Whether a doorbell's payload is one this process rang. */
  isOwn(payload: string): boolean {
    return payload.includes(` ${this.#token} `);
  }

  /** This process committed `first`…`last` of `log` (consecutive numbers). */
  committed(log: LogName, first: number, last: number): void {
    this.#heads[log] = Math.max(this.#heads[log], last);
    const ranges = this.#ranges[log];
    const latest = ranges[ranges.length - 1];
    if (latest && latest[1] + 1 === first) latest[1] = last;
    else ranges.push([first, last]);
    if (ranges.length > MAX_RANGES) ranges.shift();
  }

  /**
   * The cursor moved over every recorded range that starts right above it; ranges below it are
   * forgotten. `gap` says whether ranges are left (a read must come first).
   */
  skip(log: LogName, cursor: number): { cursor: number; gap: boolean } {
    const ranges = this.#ranges[log];
    let at = cursor;
    let i = 0;
    for (; i < ranges.length; i++) {
      const [first, last] = ranges[i];
      if (last <= at) continue;
      if (first > at + 1) break;
      at = last;
    }
    ranges.splice(0, i);
    return { cursor: at, gap: ranges.length > 0 };
  }
}

/**
 * A doorbell's parts (ownCommits.payload): its sending time (NaN if none), the log it names and the
 * sender's head of it, if it names them.
 */
export function doorbell(payload: string): { sentMs: number; log: LogName | undefined; head: number | undefined } {
  const [ms, , log, head] = payload.split(' ');
  const committed = Number(head);
  return {
    sentMs: Number(ms),
    log: LOG_NAMES.find((name) => name === log),
    head: head && Number.isSafeInteger(committed) && committed > 0 ? committed : undefined,
  };
}
