/** StateObjects read outside the log: requests, expiry times, counts, tombstone clean-up. */
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Database } from '../db/schema.js';
import type { StateObjectPatterns, StateObjectReads, StoredStateObject } from './engine.js';
import type { StateObjectGlobs } from './sqliteGlob.js';
import { globsOf, narrowGlob } from './sqliteGlob.js';

type Executor = Kysely<Database>;

/**
 * The current objects matching the GLOBs. A name filter SQLite's GLOB would backtrack on is narrowed in
 * SQL by its literal prefix, end and longest middle piece, and matched exactly here (sqliteGlob.narrowGlob).
 */
export async function queryStateObjects(db: Executor, globs: StateObjectGlobs): Promise<StoredStateObject[]> {
  const name = narrowGlob(globs.name);
  let query = db
    .selectFrom('state_objects')
    .selectAll()
    .where('is_deleted', '=', 0)
    .where(sql<boolean>`sentinel_name glob ${globs.sentinel}`)
    .where(sql<boolean>`package_name glob ${globs.package}`)
    .where(sql<boolean>`name glob ${name.glob}`)
    .where(sql<boolean>`type glob ${globs.type}`);
  if (name.suffix !== '') query = query.where(sql<boolean>`substr(name, -length(${name.suffix})) = ${name.suffix}`);
  if (name.middle !== '') query = query.where(sql<boolean>`instr(name, ${name.middle}) > 0`);
  const rows = await query.orderBy('sentinel_name').orderBy('package_name').orderBy('name').execute();
  const matches = name.matches;
  // SQLite's rows are the stored objects as they are.
  return matches === undefined ? rows : rows.filter((r) => matches(r.name));
}

export async function nextExpiry(db: Executor): Promise<number | undefined> {
  const row = await db
    .selectFrom('state_objects')
    .select((eb) => eb.fn.min('expires_at_ms').as('next'))
    .where('expires_at_ms', 'is not', null)
    .where('expiry_announced', '=', 0)
    .executeTakeFirst();
  return row?.next ?? undefined;
}

export async function countStateObjects(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('state_objects')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('is_deleted', '=', 0)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * Removes tombstones every cursor has passed, and those older than `cutoffMs` whoever has not read them
 * (a subscription that far behind gets the object's absence, not its purge).
 */
export async function deleteTombstones(db: Executor, cutoffMs: number): Promise<number> {
  const result = await db
    .deleteFrom('state_objects')
    .where('is_deleted', '=', 1)
    .where((eb) =>
      eb.or([
        eb('seq', '<=', sql<number>`(select coalesce(min(read_seq), 9007199254740991) from state_object_filters)`),
        eb('last_update_ms', '<', cutoffMs),
      ]),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The SQLite StateObjectReads: plain reads through Kysely, each one statement. */
export class StateObjectReadStore implements StateObjectReads {
  constructor(private readonly db: Executor) {}

  current(patterns: StateObjectPatterns): Promise<StoredStateObject[]> {
    return queryStateObjects(this.db, globsOf(patterns));
  }

  nextExpiry(): Promise<number | undefined> {
    return nextExpiry(this.db);
  }
}
