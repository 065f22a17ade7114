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

export class StateObjectFilters {
  private readonly selectPatterns;
  private readonly findFilter;
  private readonly insertFilter;

  constructor(db: Db, sqlite: Sqlite.Database) {
    // What a poll listens for, read at each poll's start (findOwned): the GLOBs alone, as raw rows.
    this.selectPatterns = sqlite
      .prepare<[string], [string, string, string, string]>(
        'select sentinel_glob, package_glob, name_glob, type_glob from state_object_filters where subscription_id = ? order by id',
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
    return this.selectPatterns.all(subscription).map(([sentinel, pkg, name, type]) => ({
      sentinel: fromGlob(sentinel),
      package: fromGlob(pkg),
      name: fromGlob(name),
      type: fromGlob(type),
    }));
  }
}
