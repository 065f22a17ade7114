/**
 * The rows of a StateObject take on SQLite (stateObjectTake.ts): the columns its statements read, in
 * the order its raw rows hold them, and the domain's objects made of them.
 */
import type { StateObjectGlobs } from '../glob.js';
import type { LoggedStateObject } from './takeMemory.js';

/**
 * A take's reads return rows in better-sqlite3's raw mode (arrays): building an object with named keys
 * costs it ~1 µs per row (measured: 2.7 vs 1.7 µs for a woken poll's read of one object, 3.4 vs 2.5 µs
 * for the subscription's filters), where a JavaScript object literal costs a few tens of nanoseconds.
 *
 * A take's read of its subscription (one row per filter, or one of nulls without filters): each
 * filter (id, its four GLOBs, exact name, cursor, creation and cursor before a pending delivery), then
 * the subscription's pending delivery (token, time), then, from LOGGED_AT, one object the filter has
 * not seen when it is the usual filter (EXACT_OF_ANY), else nulls: such a filter has a row per unread
 * object, oldest change first.
 */
export const TAKE_COLUMNS = `f.id, f.sentinel_glob, f.package_glob, f.name_glob, f.type_glob, f.exact_name, f.read_seq,
  f.created_seq, f.redeliver_seq, s.pending_token, s.pending_ms`;
export type TakeRow = [
  id: number | null,
  sentinel: string,
  pkg: string,
  name: string,
  type: string,
  exactName: string | null,
  readSeq: number,
  createdSeq: number,
  redeliverSeq: number | null,
  pendingToken: string | null,
  pendingMs: number | null,
  // The object's columns (LOGGED_COLUMNS), null when there is none.
  ...unread: (string | number | null)[],
];
/** Where an object's columns start in a TakeRow. */
export const LOGGED_AT = 11;

/** The columns of a take's read of the log, in the order of `loggedOf`. */
export const LOGGED_COLUMNS =
  'sentinel_name, package_name, name, type, value, metadatas, last_update_ms, lifetime_s, seq, is_deleted';
export type LoggedRow = [string, string, string, string, string, string, number, number, number, number];

/** The object of a LoggedRow, or of a row holding its columns from `at` on (a TakeRow's, LOGGED_AT). */
export const loggedOf = (r: LoggedRow | TakeRow, at = 0): LoggedStateObject => ({
  sentinelName: r[at] as string,
  packageName: r[at + 1] as string,
  name: r[at + 2] as string,
  type: r[at + 3] as string,
  value: r[at + 4] as string,
  metadatas: r[at + 5] as string,
  lastUpdateMs: r[at + 6] as number,
  lifetimeS: r[at + 7] as number,
  seq: r[at + 8] as number,
  isDeleted: r[at + 9] as number,
});
export const loggedOfRow = (r: LoggedRow) => loggedOf(r);

/**
 * The usual filter, one name from every sentinel and package of every type: the take's first read
 * brings what it has not seen (its `unread`), as readExactOfAny would, with the filters themselves.
 * EXACT_OF_ANY says it in SQL, exactOfAny of a filter read.
 */
export const exactOfAny = (f: Pick<GlobFilter, 'exactName' | 'sentinel' | 'package' | 'type'>) =>
  f.exactName !== null && f.sentinel === '*' && f.package === '*' && f.type === '*';
export const EXACT_OF_ANY =
  "f.exact_name is not null and f.sentinel_glob = '*' and f.package_glob = '*' and f.type_glob = '*'";

/**
 * A filter as a take reads it: its patterns as GLOBs, `exactName` when the name has no wildcard, its
 * cursor; `unread`, what it has not seen, when the take's first read brought it (EXACT_OF_ANY).
 */
export type GlobFilter = StateObjectGlobs & {
  exactName: string | null;
  readSeq: number;
  createdSeq: number;
  unread?: LoggedStateObject[];
};
