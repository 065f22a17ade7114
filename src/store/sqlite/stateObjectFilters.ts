/**
 * A StateObject subscription's filters, each with its cursor in the log, and a poll's read through them
 * (for SqliteStateObjectStore, which owns the sequence). `…Now` methods run inside the caller's transaction.
 */
import type Sqlite from 'better-sqlite3';
import type { Db } from './database/open.js';
import { prepareQuery } from './database/prepared.js';
import { ClientGone } from '../../errors.js';
import type { ClientSignal } from '../../hub/polls/clientSignal.js';
import type { StateObject, TakenStateObject } from '../../hub/ports/stateObjects.js';
import type { StateObjectPatterns } from '../../hub/ports/stateObjectPatterns.js';
import type { DeliveryClaim } from '../../hub/ports/subscriptions.js';
import { hasWildcard } from '../../wildcard.js';
import type { StateObjectGlobs } from './glob.js';
import { fromGlob, globsOf, narrowGlob } from './glob.js';
import type { SqlitePendingDeliveries } from './pendingDeliveries.js';

/**
 * The columns of a state_objects row named as the domain's StateObject (so a row read is the object
 * the wire record is built from, with no copy), plus its place in the log.
 */
export const STATE_OBJECT_COLUMNS = [
  'sentinel_name as sentinelName',
  'package_name as packageName',
  'name',
  'type',
  'value',
  'metadatas',
  'last_update_ms as lastUpdateMs',
  'lifetime_s as lifetimeS',
] as const;

type LoggedStateObject = StateObject & { seq: number; isDeleted: number };

type FilterRow = {
  id: number;
  sentinel_glob: string;
  package_glob: string;
  name_glob: string;
  type_glob: string;
  exact_name: string | null;
  read_seq: number;
  created_seq: number;
};

/**
 * A take's reads return rows in better-sqlite3's raw mode (arrays): building an object with named keys
 * costs it ~1 µs per row (measured: 2.7 vs 1.7 µs for a woken poll's read of one object, 3.4 vs 2.5 µs
 * for the subscription's filters), where a JavaScript object literal costs a few tens of nanoseconds.
 *
 * A take's read of its subscription (one row per filter, or one of nulls without filters): each
 * filter (id, its four GLOBs, exact name, cursor, creation and cursor before a pending delivery), then
 * the subscription's pending delivery (token, time).
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
];

/** The columns of a take's read of the log, in the order of `loggedOf`. */
const LOGGED_COLUMNS =
  'sentinel_name, package_name, name, type, value, metadatas, last_update_ms, lifetime_s, seq, is_deleted';
type LoggedRow = [string, string, string, string, string, string, number, number, number, number];

const loggedOf = (r: LoggedRow): LoggedStateObject => ({
  sentinelName: r[0],
  packageName: r[1],
  name: r[2],
  type: r[3],
  value: r[4],
  metadatas: r[5],
  lastUpdateMs: r[6],
  lifetimeS: r[7],
  seq: r[8],
  isDeleted: r[9],
});

/** A filter as stored: its patterns as GLOBs, `exactName` when the name has no wildcard, its cursor. */
type GlobFilter = StateObjectGlobs & { id: number; exactName: string | null; readSeq: number; createdSeq: number };

const toFilter = (r: FilterRow): GlobFilter => ({
  id: r.id,
  sentinel: r.sentinel_glob,
  package: r.package_glob,
  name: r.name_glob,
  type: r.type_glob,
  exactName: r.exact_name,
  readSeq: r.read_seq,
  createdSeq: r.created_seq,
});

/** The boundary: a filter leaves the store as the `*` patterns it was given (glob.ts). */
const patternsOf = (f: GlobFilter): StateObjectPatterns => ({
  sentinel: fromGlob(f.sentinel),
  package: fromGlob(f.package),
  name: fromGlob(f.name),
  type: fromGlob(f.type),
});

export class StateObjectFilters {
  private readonly selectFilters;
  private readonly selectForTake;
  private readonly findFilter;
  private readonly insertFilter;
  private readonly readExact;
  private readonly readExactOfAny;
  private readonly readWildcard;
  private readonly readAnyName;
  private readonly readNarrowed;
  private readonly advance;
  private readonly touch;
  private readonly backlog: LegacyBacklog;

  constructor(
    db: Db,
    sqlite: Sqlite.Database,
    private readonly pending: SqlitePendingDeliveries,
  ) {
    this.backlog = new LegacyBacklog(sqlite);
    this.touch = sqlite.prepare('update subscriptions set last_active_ms = ? where id = ?');

    this.selectFilters = prepareQuery<{ subscription: string }, FilterRow>(sqlite, (p) =>
      db
        .selectFrom('state_object_filters')
        .select([
          'id',
          'sentinel_glob',
          'package_glob',
          'name_glob',
          'type_glob',
          'exact_name',
          'read_seq',
          'created_seq',
        ])
        .where('subscription_id', '=', p.subscription)
        .orderBy('id'),
    );
    // The filters and the subscription's pending delivery in one statement: a take reads both, and one
    // statement fewer is ~0.4 µs of the ~10 µs of a woken poll's take (1,000 of them in one wake-up).
    this.selectForTake = sqlite
      .prepare(
        `select ${TAKE_COLUMNS} from subscriptions s left join state_object_filters f on f.subscription_id = s.id
        where s.id = ? order by f.id`,
      )
      .raw(true);
    type FilterParams = { subscription: string; sentinel: string; package: string; name: string; type: string };
    this.findFilter = prepareQuery<FilterParams, { id: number }>(sqlite, (p) =>
      db
        .selectFrom('state_object_filters')
        .select('id')
        .where('subscription_id', '=', p.subscription)
        .where('sentinel_glob', '=', p.sentinel)
        .where('package_glob', '=', p.package)
        .where('name_glob', '=', p.name)
        .where('type_glob', '=', p.type),
    );
    // A new filter reads from zero: its first poll returns the current objects, not older tombstones.
    this.insertFilter = prepareQuery<FilterParams & { exactName: string | null; seq: number }>(sqlite, (p) =>
      db.insertInto('state_object_filters').values({
        subscription_id: p.subscription,
        sentinel_glob: p.sentinel,
        package_glob: p.package,
        name_glob: p.name,
        type_glob: p.type,
        exact_name: p.exactName,
        read_seq: 0,
        created_seq: p.seq,
      }),
    );

    // The objects a filter has not seen yet, oldest change first, latest value only (one row per object):
    // an exact name through the (name, seq) index, a wildcard through (seq) or GLOB's literal prefix.
    // No bound LIMIT (it cost ~9 µs per read, measured): a limit is applied after reading.
    // `glob cast(? as text)`, not `glob ?`: a bare parameter as a GLOB pattern makes SQLite re-prepare
    // the statement whenever that parameter is bound (it plans the LIKE optimisation for the value), i.e.
    // on every read: ~9 µs of the ~11 µs a woken poll's read cost (measured). Only the name's GLOB, which
    // does use the optimisation (its literal prefix through the (name, seq) index), keeps a bare parameter.
    const unread = `sentinel_name glob cast(? as text) and package_name glob cast(? as text) and type glob cast(? as text)
      and (is_deleted = 0 or seq > ?)`;
    this.readExact = sqlite
      .prepare(`select ${LOGGED_COLUMNS} from state_objects where name = ? and seq > ? and ${unread} order by seq`)
      .raw(true);
    // The usual subscription, one name from every sentinel and package of every type: its three `*`
    // GLOBs match any row, and leaving them out is ~0.4 µs of a woken poll's read (measured).
    this.readExactOfAny = sqlite
      .prepare(
        `select ${LOGGED_COLUMNS} from state_objects where name = ? and seq > ? and (is_deleted = 0 or seq > ?) order by seq`,
      )
      .raw(true);
    this.readWildcard = sqlite
      .prepare(`select ${LOGGED_COLUMNS} from state_objects where name glob ? and seq > ? and ${unread} order by seq`)
      .raw(true);
    // A name filter of `*` alone has no prefix to use: the log above the cursor through (seq), no re-prepare.
    this.readAnyName = sqlite
      .prepare(`select ${LOGGED_COLUMNS} from state_objects where seq > ? and ${unread} order by seq`)
      .raw(true);
    // A filter SQLite's GLOB would backtrack on (glob.ts, narrowGlob): its literal prefix through the
    // index, its end and longest middle piece as plain comparisons; the exact match follows in memory.
    this.readNarrowed = sqlite
      .prepare(
        `select ${LOGGED_COLUMNS} from state_objects where name glob ? and seq > ? and ${unread}
        and (? = '' or substr(name, -length(?)) = ?) and (? = '' or instr(name, ?) > 0) order by seq`,
      )
      .raw(true);

    this.advance = prepareQuery<{ subscription: string; seq: number }>(sqlite, (p) =>
      db
        .updateTable('state_object_filters')
        .set({ read_seq: p.seq })
        .where('subscription_id', '=', p.subscription)
        .where('read_seq', '<', p.seq),
    );
  }

  /** Inside a subscription's transaction: adds the filter unless it is there already. True when added. */
  addNow(subscription: string, patterns: StateObjectPatterns, seq: number): boolean {
    const filter = { subscription, ...globsOf(patterns) };
    if (this.findFilter.get(filter)) return false;
    const exactName = hasWildcard(patterns.name) ? null : patterns.name;
    this.insertFilter.run({ ...filter, exactName, seq });
    return true;
  }

  /** Inside a transaction: the filters of a subscription, with their patterns. */
  patternsNow(subscription: string): StateObjectPatterns[] {
    return this.globFiltersNow(subscription).map(patternsOf);
  }

  /** Inside a transaction: the filters of a subscription as stored (GLOBs). */
  private globFiltersNow(subscription: string): GlobFilter[] {
    return this.selectFilters.all({ subscription }).map(toFilter);
  }

  /**
   * Inside a transaction: reads what the subscription has not seen up to `top` (the oldest `limit`
   * changed objects, 0 = all, each with its latest value) and moves its cursors past them. Throws
   * ClientGone when `abort` fired: the caller's transaction rolls back and nothing is consumed. A
   * claim works as StateObjectStore.take says (pendingDeliveries.ts).
   */
  takeNow(
    subscription: string,
    limit: number,
    abort: ClientSignal,
    top: number,
    claim: DeliveryClaim | undefined,
  ): TakenStateObject[] {
    const read = this.selectForTake.all(subscription) as TakeRow[];
    const verdict =
      read.length === 0 ? undefined : this.pending.judgeFiltersNow(subscription, claim, read[0][9], read[0][10]);
    if (verdict === 'wait') return [];
    const legacy = this.backlog.take(subscription, limit);
    if (legacy.length > 0) {
      if (abort.aborted) throw new ClientGone();
      this.touch.run(Date.now(), subscription);
      if (verdict !== undefined) this.pending.endedNow(subscription);
      return legacy;
    }
    const filters: GlobFilter[] = [];
    for (const [id, sentinel, pkg, name, type, exactName, readSeq, createdSeq, redeliverSeq] of read) {
      if (id === null) continue;
      // Read again from before the pending delivery, as judgeFiltersNow moved the stored cursors.
      const from = verdict === 'redeliver' && redeliverSeq !== null ? redeliverSeq : readSeq;
      filters.push({ id, sentinel, package: pkg, name, type, exactName, readSeq: from, createdSeq });
    }
    // One filter's changes come in order and each once: merged (by seq) only when several filters read some.
    let rows: LoggedStateObject[] = [];
    let merged: Map<number, LoggedStateObject> | undefined;
    for (const f of filters) {
      if (f.readSeq >= top) continue;
      const unread = this.unreadNow(f);
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
      // until its answer is written.
      this.pending.deliverFiltersNow(subscription, readUpTo, claim, Date.now());
    } else {
      if (filters.some((f) => f.readSeq < readUpTo)) this.advance.run({ subscription, seq: readUpTo });
      if (verdict !== undefined) this.pending.endedNow(subscription);
    }
    return rows.map((r) => ({
      sentinelName: r.sentinelName,
      packageName: r.packageName,
      name: r.name,
      type: r.type,
      current: r.isDeleted ? undefined : r,
    }));
  }

  /** Inside a transaction: what one filter has not seen yet, oldest change first (each object once). */
  private unreadNow(f: GlobFilter): LoggedStateObject[] {
    return this.unreadRowsNow(f).map(loggedOf);
  }

  private unreadRowsNow(f: GlobFilter): LoggedRow[] {
    const { exactName, readSeq, sentinel, package: pkg, type, createdSeq } = f;
    if (exactName !== null && sentinel === '*' && pkg === '*' && type === '*')
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

/**
 * The changes that were pending when a database moved to cursors (migration 0003): read before the
 * cursor, oldest first, then gone. Nothing writes new ones, so once empty this costs one flag check.
 */
class LegacyBacklog {
  private pending: boolean;
  private readonly select;
  private readonly remove;

  constructor(private readonly sqlite: Sqlite.Database) {
    this.pending = sqlite.prepare('select 1 from state_object_changes limit 1').get() !== undefined;
    this.select =
      sqlite.prepare(`select c.id as changeId, c.sentinel_name as sentinelName, c.package_name as packageName,
        c.name, c.type as changeType, c.is_deleted as changeDeleted, s.type, s.value, s.metadatas,
        s.last_update_ms as lastUpdateMs, s.lifetime_s as lifetimeS, s.is_deleted as isDeleted
      from state_object_changes c left join state_objects s
        on s.sentinel_name = c.sentinel_name and s.package_name = c.package_name and s.name = c.name
      where c.subscription_id = ? order by c.id limit ?`);
    this.remove = sqlite.prepare('delete from state_object_changes where subscription_id = ? and id <= ?');
  }

  take(subscription: string, limit: number): TakenStateObject[] {
    if (!this.pending) return [];
    // Left join: the object's columns are null when it is gone.
    type Row = StateObject & { changeId: number; changeType: string; changeDeleted: number; isDeleted: number | null };
    const rows = this.select.all(subscription, limit > 0 ? limit : -1) as Row[];
    if (rows.length === 0) {
      this.pending = this.sqlite.prepare('select 1 from state_object_changes limit 1').get() !== undefined;
      return [];
    }
    this.remove.run(subscription, rows[rows.length - 1].changeId);
    return rows.map((r) => ({
      sentinelName: r.sentinelName,
      packageName: r.packageName,
      name: r.name,
      type: r.type ?? r.changeType,
      current: r.changeDeleted || r.value === null || r.isDeleted ? undefined : r,
    }));
  }
}
