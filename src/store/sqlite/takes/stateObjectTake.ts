/**
 * A poll's take of a StateObject subscription on SQLite, as one sequence inside one group-commit
 * transaction (SqliteStateObjectStore.take): read the subscription's filters and pending delivery, with
 * what the usual filter has not seen (one statement); judge the pending delivery by the claim
 * (ports/deliveryClaim.ts: `wait` takes nothing, `redeliver` moves the cursors back before it); read
 * each other filter (every filter, redelivering) above its cursor up to the log's top; keep the oldest
 * `limit` changed objects; then move the cursors and leave what it delivers pending under the claim's
 * token, or, delivering nothing, move the cursors to the top and end the pending delivery judged. Settling a pending delivery later is ../pendingDeliveries.ts.
 */
import type Sqlite from 'better-sqlite3';
import { ClientGone } from '../../../errors.js';
import type { ClientSignal } from '../../../hub/polls/clientSignal.js';
import type { DeliveryClaim } from '../../../hub/ports/deliveryClaim.js';
import { judgePending } from '../../../hub/ports/deliveryClaim.js';
import type { StateObject, TakenStateObjects } from '../../../hub/ports/stateObjects.js';
import type { StateObjectGlobs } from '../glob.js';
import { narrowGlob } from '../glob.js';
import { StateObjectBacklog } from './stateObjectBacklog.js';

type LoggedStateObject = StateObject & { seq: number; isDeleted: number };

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
const TAKE_COLUMNS = `f.id, f.sentinel_glob, f.package_glob, f.name_glob, f.type_glob, f.exact_name, f.read_seq,
  f.created_seq, f.redeliver_seq, s.pending_token, s.pending_ms`;
type TakeRow = [
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
const LOGGED_AT = 11;

/** The columns of a take's read of the log, in the order of `loggedOf`. */
const LOGGED_COLUMNS =
  'sentinel_name, package_name, name, type, value, metadatas, last_update_ms, lifetime_s, seq, is_deleted';
type LoggedRow = [string, string, string, string, string, string, number, number, number, number];

/** The object of a LoggedRow, or of a row holding its columns from `at` on (a TakeRow's, LOGGED_AT). */
const loggedOf = (r: LoggedRow | TakeRow, at = 0): LoggedStateObject => ({
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
const loggedOfRow = (r: LoggedRow) => loggedOf(r);

/**
 * The usual filter, one name from every sentinel and package of every type: the take's first read
 * brings what it has not seen (its `unread`), as readExactOfAny would, with the filters themselves.
 * EXACT_OF_ANY says it in SQL, exactOfAny of a filter read.
 */
const exactOfAny = (f: GlobFilter) => f.exactName !== null && f.sentinel === '*' && f.package === '*' && f.type === '*';
const EXACT_OF_ANY =
  "f.exact_name is not null and f.sentinel_glob = '*' and f.package_glob = '*' and f.type_glob = '*'";

/**
 * A filter as a take reads it: its patterns as GLOBs, `exactName` when the name has no wildcard, its
 * cursor; `unread`, what it has not seen, when the take's first read brought it (EXACT_OF_ANY).
 */
type GlobFilter = StateObjectGlobs & {
  exactName: string | null;
  readSeq: number;
  createdSeq: number;
  unread?: LoggedStateObject[];
};

export class SqliteStateObjectTake {
  private readonly selectForTake;
  private readonly readExact;
  private readonly readExactOfAny;
  private readonly readWildcard;
  private readonly readAnyName;
  private readonly readNarrowed;
  private readonly restoreFilters;
  private readonly deliverFilters;
  private readonly deliverSubscription;
  private readonly advance;
  private readonly endPending;
  private readonly touch;
  private readonly backlog: StateObjectBacklog;

  constructor(sqlite: Sqlite.Database) {
    this.backlog = new StateObjectBacklog(sqlite);
    // The filters, the subscription's pending delivery and what the usual filter has not seen in one
    // statement: one statement fewer is ~0.4 µs of the ~10 µs of a woken poll's take (1,000 of them in
    // one wake-up), and the usual filter's read with it ~1.3 µs more (4.6 against 5.9 µs, measured).
    // The object's condition is readExactOfAny's, through the same (name, seq) index.
    // A bound value meets an indexed column through `cast(? as …)`: no plan depends on a cast's value.
    // A bare one makes SQLite, once the file has statistics (an ANALYZE someone ran with the sqlite3
    // CLI), re-prepare the statement at every bind to plan for that value (better-sqlite3 builds SQLite
    // with STAT4): a take's read cost 5–6× as much (31 against 5.3 µs, measured; a poll's first read, a
    // message take's read and the cursor moves 3–4×). Exceptions: `where id = ?` alone (one row by its
    // unique key, planned without statistics), and the wildcard reads below, re-prepared at every bind
    // anyway for their name's GLOB, whose cursor stays bare so that statistics show how few rows are above it.
    this.selectForTake = sqlite
      .prepare(
        `select ${TAKE_COLUMNS}, ${LOGGED_COLUMNS.split(', ')
          .map((column) => `o.${column}`)
          .join(', ')}
        from subscriptions s left join state_object_filters f on f.subscription_id = s.id
        left join state_objects o on ${EXACT_OF_ANY}
          and o.name = f.exact_name and o.seq > f.read_seq and (o.is_deleted = 0 or o.seq > f.created_seq)
        where s.id = cast(? as text) order by f.id, o.seq`,
      )
      .raw(true);
    // The objects a filter has not seen yet, oldest change first, latest value only (one row per object):
    // an exact name through the (name, seq) index, a wildcard through (seq) or GLOB's literal prefix.
    // No bound LIMIT (it cost ~9 µs per read, measured): a limit is applied after reading.
    // `glob cast(? as text)`, not `glob ?`: a bare parameter as a GLOB pattern makes SQLite re-prepare
    // the statement whenever that parameter is bound (it plans the LIKE optimisation for the value), i.e.
    // on every read: ~9 µs of the ~11 µs a woken poll's read cost (measured). Only the name's GLOB, which
    // does use the optimisation (its literal prefix through the (name, seq) index), keeps a bare parameter.
    const unread = `sentinel_name glob cast(? as text) and package_name glob cast(? as text) and type glob cast(? as text)
      and (is_deleted = 0 or seq > cast(? as integer))`;
    this.readExact = sqlite
      .prepare(
        `select ${LOGGED_COLUMNS} from state_objects where name = cast(? as text) and seq > cast(? as integer)
        and ${unread} order by seq`,
      )
      .raw(true);
    // The usual subscription, one name from every sentinel and package of every type: its three `*`
    // GLOBs match any row, and leaving them out is ~0.4 µs of a woken poll's read (measured).
    this.readExactOfAny = sqlite
      .prepare(
        `select ${LOGGED_COLUMNS} from state_objects where name = cast(? as text) and seq > cast(? as integer)
        and (is_deleted = 0 or seq > cast(? as integer)) order by seq`,
      )
      .raw(true);
    this.readWildcard = sqlite
      .prepare(`select ${LOGGED_COLUMNS} from state_objects where name glob ? and seq > ? and ${unread} order by seq`)
      .raw(true);
    // A name filter of `*` alone has no prefix to use: the log above the cursor through (seq), no re-prepare.
    this.readAnyName = sqlite
      .prepare(`select ${LOGGED_COLUMNS} from state_objects where seq > cast(? as integer) and ${unread} order by seq`)
      .raw(true);
    // A filter SQLite's GLOB would backtrack on (glob.ts, narrowGlob): its literal prefix through the
    // index, its end and longest middle piece as plain comparisons; the exact match follows in memory.
    this.readNarrowed = sqlite
      .prepare(
        `select ${LOGGED_COLUMNS} from state_objects where name glob ? and seq > ? and ${unread}
        and (? = '' or substr(name, -length(?)) = ?) and (? = '' or instr(name, ?) > 0) order by seq`,
      )
      .raw(true);

    this.restoreFilters = sqlite.prepare(
      'update state_object_filters set read_seq = redeliver_seq where subscription_id = cast(? as text) and redeliver_seq is not null',
    );
    this.deliverFilters = sqlite.prepare(
      'update state_object_filters set redeliver_seq = read_seq, read_seq = max(read_seq, ?) where subscription_id = cast(? as text)',
    );
    this.deliverSubscription = sqlite.prepare(
      'update subscriptions set last_active_ms = ?, pending_token = ?, pending_ms = ? where id = ?',
    );
    this.advance = sqlite.prepare(
      'update state_object_filters set read_seq = ? where subscription_id = cast(? as text) and read_seq < ?',
    );
    this.endPending = sqlite.prepare('update subscriptions set pending_token = null where id = ?');
    this.touch = sqlite.prepare('update subscriptions set last_active_ms = ? where id = ?');
  }

  /**
   * Inside a transaction: reads what the subscription has not seen up to `top` (the oldest `limit`
   * changed objects, 0 = all, each with its latest value) and moves its cursors past them, under the
   * claim as the header says. Throws ClientGone when `abort` fired: the caller's transaction rolls back
   * and nothing is consumed.
   */
  takeNow(
    subscription: string,
    limit: number,
    abort: ClientSignal,
    top: number,
    claim: DeliveryClaim | undefined,
  ): TakenStateObjects {
    const read = this.selectForTake.all(subscription) as TakeRow[];
    const now = Date.now();
    const judged = read.length === 0 ? undefined : judgePending(claim, read[0][9], read[0][10], now);
    if (judged?.verdict === 'wait') return { objects: [], judged };
    if (judged?.verdict === 'redeliver') this.restoreFilters.run(subscription);
    const legacy = this.backlog.take(subscription, limit);
    if (legacy.length > 0) {
      if (abort.aborted) throw new ClientGone();
      this.touch.run(now, subscription);
      if (judged) this.endPending.run(subscription);
      return { objects: legacy, judged };
    }
    const filters: GlobFilter[] = [];
    const redeliver = judged?.verdict === 'redeliver';
    let filter: GlobFilter | undefined;
    let filterId: number | null = null;
    for (const row of read) {
      const [id, sentinel, pkg, name, type, exactName, readSeq, createdSeq, redeliverSeq] = row;
      if (id === null) continue;
      if (id !== filterId) {
        filterId = id;
        // Read again from before the pending delivery, as restoreFilters moved the stored cursors (what
        // the first read brought, from the cursor after it, is not all of it).
        const from = redeliver && redeliverSeq !== null ? redeliverSeq : readSeq;
        filter = { sentinel, package: pkg, name, type, exactName, readSeq: from, createdSeq };
        if (!redeliver && exactOfAny(filter)) filter.unread = [];
        filters.push(filter);
      }
      if (filter?.unread && row[LOGGED_AT + 8] !== null) filter.unread.push(loggedOf(row, LOGGED_AT));
    }
    // One filter's changes come in order and each once: merged (by seq) only when several filters read some.
    let rows: LoggedStateObject[] = [];
    let merged: Map<number, LoggedStateObject> | undefined;
    for (const f of filters) {
      if (f.readSeq >= top) continue;
      const unread = f.unread ?? this.unreadRowsNow(f).map(loggedOfRow);
      if (unread.length === 0) continue;
      if (rows.length === 0) {
        rows = unread;
        continue;
      }
      merged ??= new Map(rows.map((row) => [row.seq, row]));
      for (const row of unread) merged.set(row.seq, row);
    }
    if (merged) rows = [...merged.values()].sort((a, b) => a.seq - b.seq);
    // Past `limit`: every cursor moves to the last change kept (each filter read all it had not
    // seen, so nothing older is left behind); otherwise every cursor moves to the end of the log.
    let readUpTo = top;
    if (limit > 0 && rows.length > limit) {
      rows = rows.slice(0, limit);
      readUpTo = rows[rows.length - 1].seq;
    }
    if (rows.length > 0) {
      if (abort.aborted) throw new ClientGone();
      // Active now, in the transaction that consumed (an answer waits for no second commit), pending
      // under the claim until its answer is written (in place of the pending delivery judged).
      this.deliverFilters.run(readUpTo, subscription);
      this.deliverSubscription.run(now, claim?.token ?? null, now, subscription);
    } else {
      if (filters.some((f) => f.readSeq < readUpTo)) this.advance.run(readUpTo, subscription, readUpTo);
      if (judged) this.endPending.run(subscription);
    }
    const objects = rows.map((r) => ({
      sentinelName: r.sentinelName,
      packageName: r.packageName,
      name: r.name,
      type: r.type,
      current: r.isDeleted ? undefined : r,
    }));
    return { objects, judged };
  }

  /** Inside a transaction: what one filter has not seen yet, oldest change first (each object once). */
  private unreadRowsNow(f: GlobFilter): LoggedRow[] {
    const { exactName, readSeq, sentinel, package: pkg, type, createdSeq } = f;
    if (exactName !== null && exactOfAny(f))
      return this.readExactOfAny.all(exactName, readSeq, createdSeq) as LoggedRow[];
    if (exactName !== null)
      return this.readExact.all(exactName, readSeq, sentinel, pkg, type, createdSeq) as LoggedRow[];
    if (f.name === '*') return this.readAnyName.all(readSeq, sentinel, pkg, type, createdSeq) as LoggedRow[];
    const name = narrowGlob(f.name);
    if (name.matches === undefined)
      return this.readWildcard.all(f.name, readSeq, sentinel, pkg, type, createdSeq) as LoggedRow[];
    const { glob, suffix, middle, matches } = name;
    const rows = this.readNarrowed.all(
      glob,
      readSeq,
      sentinel,
      pkg,
      type,
      createdSeq,
      suffix,
      suffix,
      suffix,
      middle,
      middle,
    );
    return (rows as LoggedRow[]).filter((row) => matches(row[2]));
  }
}
