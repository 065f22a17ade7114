/**
 * What a StateObject take on SQLite knows without reading the file (stateObjectTake.ts): the log's
 * latest pushes in order, and, for each subscription whose last take delivered nothing and whose
 * filters are all of the usual kind (one name, any sentinel, package and type), those names and the
 * cursor that take left. A poll woken by a push then takes from memory: the read it would make (~5 µs
 * of its ~9 µs take, a thousand of them in a fan-out) is not made; its writes (cursors, pending
 * delivery) are the same statements in the same transaction, so what is delivered, and when it is
 * consumed, does not change.
 *
 * It holds only while memory and file agree, which this process alone can see to: the file is its own
 * (SQLite: one process), and
 * - a change of the log that is not a push (a tombstone, an expiry) starts the pushes anew after it
 *   (so no tombstone is ever within what memory answers for, and their sweep changes nothing here);
 * - a write that adds a filter, moves a cursor back, or creates or deletes a subscription forgets that
 *   subscription; the others (its activity, ending a pending delivery) change nothing a take reads
 *   here, and a take that leaves a delivery pending forgets it itself;
 * - a transaction rolled back, whole or to a savepoint, forgets everything (a batch's pieces may run twice).
 * The test suite checks every take from memory against the file (verifyTakes.ts).
 */
import type { StateObject } from '../../../hub/ports/stateObjects.js';

/** A change of the log as a take returns it: the object's latest value, its sequence number, whether deleted. */
export type LoggedStateObject = StateObject & { seq: number; isDeleted: number };

/** A subscription as its last take left it, having delivered nothing: its filters' names, all at `cursor`. */
interface Idle {
  names: string[];
  cursor: number;
  /** The names as a set, when there are enough of them for a set to be the faster lookup. */
  nameSet?: Set<string>;
}

/** Names of a subscription past which a set looks them up rather than the array. */
const MANY_NAMES = 16;

const keyOf = (row: LoggedStateObject) => JSON.stringify([row.sentinelName, row.packageName, row.name]);

/**
 * The pushes kept at most, by count and by the characters of their values (the oldest half goes past either).
 * Enough for the pushes that wake a poll soon after its last take (a fan-out's one); each push kept
 * outlives the young generation, and 1,024 of them cost ~5 % of a push's CPU, 64 within noise
 * (bench/pushAB.ts, docs/benchmark-notes.md).
 */
export const MAX_PUSHES = 64;
const MAX_CHARACTERS = 1024 * 1024;

export class TakeMemory {
  /** The pushes after `from`, oldest first: every change of the log after `from` is one of them. */
  private pushes: LoggedStateObject[] = [];
  private from: number;
  private characters = 0;
  private readonly idle = new Map<string, Idle>();

  /** `seqNow`: the log's last sequence number given out (the store's, bumped inside its transactions). */
  constructor(private readonly seqNow: () => number) {
    this.from = seqNow();
  }

  /** Inside a transaction: a push, the log's latest change. */
  pushed(row: LoggedStateObject): void {
    this.pushes.push(row);
    this.characters += row.value.length + row.metadatas.length;
    if (this.pushes.length > MAX_PUSHES || this.characters > MAX_CHARACTERS) {
      const kept = this.pushes.slice(this.pushes.length >> 1);
      this.from = kept[0].seq - 1;
      this.pushes = kept;
      this.characters = kept.reduce((sum, r) => sum + r.value.length + r.metadatas.length, 0);
    }
  }

  /** Inside a transaction: a change of the log that is not a push, at `seq`; the pushes start after it. */
  changed(seq: number): void {
    this.pushes = [];
    this.characters = 0;
    this.from = seq;
  }

  /** A transaction rolled back (whole or to a savepoint): nothing remembered may still be true. */
  rolledBack(): void {
    this.changed(this.seqNow());
    this.idle.clear();
  }

  /** A write to the subscription or its filters other than its take's own. */
  forget(subscription: string): void {
    this.idle.delete(subscription);
  }

  /** Inside a transaction: the subscription's take delivered nothing and left every filter at `cursor`. */
  remember(subscription: string, names: string[], cursor: number): void {
    const idle = this.idle.get(subscription);
    // A take from memory remembers the names it was given: only the cursor moves (no entry per take).
    if (idle?.names === names) idle.cursor = cursor;
    else
      this.idle.set(subscription, { names, cursor, nameSet: names.length > MANY_NAMES ? new Set(names) : undefined });
  }

  /**
   * The subscription's unread objects, oldest change first, each once with its latest value, with the
   * cursor they follow and its filters' names, when memory knows them; undefined when the file must be read.
   */
  unread(subscription: string): { cursor: number; names: string[]; rows: LoggedStateObject[] } | undefined {
    const idle = this.idle.get(subscription);
    if (!idle || idle.cursor < this.from) return undefined;
    const { names, cursor, nameSet } = idle;
    const rows: LoggedStateObject[] = [];
    let seen: Set<string> | undefined;
    // Newest first, so an object pushed twice counts at its latest push (the file keeps only that one).
    for (let i = this.pushes.length - 1; i >= 0; i--) {
      const row = this.pushes[i];
      if (row.seq <= cursor) break;
      if (!(nameSet ? nameSet.has(row.name) : names.includes(row.name))) continue;
      if (rows.length > 0) {
        seen ??= new Set(rows.map(keyOf));
        const key = keyOf(row);
        if (seen.has(key)) continue;
        seen.add(key);
      }
      rows.push(row);
    }
    return { cursor, names, rows: rows.reverse() };
  }
}
