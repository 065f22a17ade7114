/**
 * A StateObject subscription's filters, each with its cursor in the log (for SqliteStateObjectStore,
 * which owns the sequence; a poll's read through them is stateObjectTake.ts). `…Now` methods run
 * inside the caller's transaction.
 */
import type Sqlite from 'better-sqlite3';
import type { Db } from './database/open.js';
import { prepareQuery } from './database/prepared.js';
import type { StateObjectPatterns } from '../../hub/ports/stateObjectPatterns.js';
import { hasWildcard } from '../../wildcard.js';
import type { StateObjectGlobs } from './glob.js';
import { fromGlob, globsOf } from './glob.js';

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
  private readonly findFilter;
  private readonly insertFilter;

  constructor(db: Db, sqlite: Sqlite.Database) {
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
}
