/**
 * A poll's take of a StateObject subscription on SQLite, as one sequence inside one group-commit
 * transaction (SqliteStateObjectStore.take): read the subscription's filters and pending delivery, with
 * what the usual filter has not seen (one statement); judge the pending delivery by the claim
 * (ports/deliveryClaim.ts: `wait` takes nothing, `redeliver` moves the cursors back before it); read
 * each other filter (every filter, redelivering) above its cursor up to the log's top; keep the oldest
 * `limit` changed objects; then move the cursors and leave what it delivers pending under the claim's
 * token, or, delivering nothing, move the cursors to the top and end the pending delivery judged.
 * A subscription memory knows (takeMemory.ts) skips the read. Settling a pending delivery later is
 * ../pendingDeliveries.ts.
 */
import type Sqlite from 'better-sqlite3';
import { ClientGone } from '../../../errors.js';
import type { ClientSignal } from '../../../hub/polls/clientSignal.js';
import type { DeliveryClaim, JudgedPending } from '../../../hub/ports/deliveryClaim.js';
import { judgePending } from '../../../hub/ports/deliveryClaim.js';
import type { TakenStateObjects } from '../../../hub/ports/stateObjects.js';
import { narrowGlob } from '../glob.js';
import { StateObjectBacklog } from './stateObjectBacklog.js';
import type { LoggedStateObject, TakeMemory } from './takeMemory.js';
import type { GlobFilter, LoggedRow, TakeRow } from './takeRows.js';
import { answeredFromMemory, verifyingTakes, verifyStateObjectTake } from './verifyTakes.js';
import {
  EXACT_OF_ANY,
  exactOfAny,
  LOGGED_AT,
  LOGGED_COLUMNS,
  loggedOf,
  loggedOfRow,
  TAKE_COLUMNS,
} from './takeRows.js';

/** What a take was asked: which subscription, how many objects at most (0: all), up to which change, under which claim. */
interface Take {
  subscription: string;
  limit: number;
  abort: ClientSignal;
  top: number;
  claim: DeliveryClaim | undefined;
}

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

  constructor(
    sqlite: Sqlite.Database,
    private readonly memory: TakeMemory,
  ) {
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
   * claim as the header says; from memory when it knows them (takeMemory.ts), else from the file.
   * Throws ClientGone when `abort` fired: the caller's transaction rolls back and nothing is consumed.
   */
  takeNow(
    subscription: string,
    limit: number,
    abort: ClientSignal,
    top: number,
    claim: DeliveryClaim | undefined,
  ): TakenStateObjects {
    const take: Take = { subscription, limit, abort, top, claim };
    const known = this.memory.unread(subscription);
    if (!known) return this.readAndTakeNow(take);
    answeredFromMemory();
    if (verifyingTakes) verifyStateObjectTake(subscription, known, this.selectForTake.all(subscription) as TakeRow[]);
    // No pending delivery to judge (a take delivering leaves one, and memory forgets it), no backlog
    // (the take it remembers found it empty, and nothing fills it again).
    return this.deliverNow(take, known.rows, known.cursor < top, undefined, known.names);
  }

  /** takeNow from the file: the subscription's filters, pending delivery and unread objects read. */
  private readAndTakeNow(take: Take): TakenStateObjects {
    const { subscription, limit, abort, top, claim } = take;
    const read = this.selectForTake.all(subscription) as TakeRow[];
    const now = Date.now();
    const judged = read.length === 0 ? undefined : judgePending(claim, read[0][9], read[0][10], now);
    if (judged?.verdict === 'wait') return { objects: [], judged };
    if (judged?.verdict === 'redeliver') this.restoreFilters.run(subscription);
    const legacy = this.backlog.take(subscription, limit);
    if (legacy.length > 0) {
      if (abort.aborted) throw new ClientGone();
      this.memory.forget(subscription);
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
    // Memory can answer the next take when the subscription exists and every filter is the usual kind.
    const names = read.length > 0 && filters.every(exactOfAny) ? filters.map((f) => f.exactName as string) : undefined;
    const behind = filters.some((f) => f.readSeq < top);
    return this.deliverNow(take, rows, behind, judged, names);
  }

  /**
   * Inside a transaction: the take's writes for the unread `found` (`behind`: some cursor is below
   * `top`). Past `limit`, every cursor moves to the last change kept (each filter read all it had not
   * seen, so nothing older is left behind); otherwise every cursor moves to `top`. A take that delivers
   * leaves its delivery pending; one that delivers nothing, with filters `names`, is remembered.
   */
  private deliverNow(
    { subscription, limit, abort, top, claim }: Take,
    found: LoggedStateObject[],
    behind: boolean,
    judged: JudgedPending | undefined,
    names: string[] | undefined,
  ): TakenStateObjects {
    let rows = found;
    let readUpTo = top;
    if (limit > 0 && rows.length > limit) {
      rows = rows.slice(0, limit);
      readUpTo = rows[rows.length - 1].seq;
    }
    if (rows.length > 0) {
      if (abort.aborted) throw new ClientGone();
      // Active now, in the transaction that consumed (an answer waits for no second commit), pending
      // under the claim until its answer is written (in place of the pending delivery judged).
      const now = Date.now();
      this.deliverFilters.run(readUpTo, subscription);
      this.deliverSubscription.run(now, claim?.token ?? null, now, subscription);
      this.memory.forget(subscription);
    } else {
      if (behind) this.advance.run(readUpTo, subscription, readUpTo);
      if (judged) this.endPending.run(subscription);
      if (names) this.memory.remember(subscription, names, readUpTo);
      else this.memory.forget(subscription);
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
