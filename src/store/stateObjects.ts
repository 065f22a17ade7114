/** StateObjects and the per-subscription change rows that make GetStateObjects coalesce. */
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Database, NewStateObjectRow, StateObjectRow } from '../db/schema.js';

type Executor = Kysely<Database>;

export interface StateObjectKey {
  sentinelName: string;
  packageName: string;
  name: string;
}

/** GLOB patterns (see hub/patterns.ts) over the four filter keys. */
export interface StateObjectGlobs {
  sentinel: string;
  package: string;
  name: string;
  type: string;
}

export interface StateObjectChange extends StateObjectKey {
  changeId: number;
  type: string;
  /** Set when the object was purged (or is gone): the record goes out with `IsDeleted`. */
  current: StateObjectRow | undefined;
}

export async function upsertStateObject(db: Executor, row: NewStateObjectRow): Promise<void> {
  await db
    .insertInto('state_objects')
    .values({ ...row, expiry_announced: 0 })
    .onConflict((oc) =>
      oc.columns(['sentinel_name', 'package_name', 'name']).doUpdateSet({
        type: row.type,
        value: row.value,
        metadatas: row.metadatas,
        last_update_ms: row.last_update_ms,
        lifetime_s: row.lifetime_s,
        expires_at_ms: row.expires_at_ms,
        expiry_announced: 0,
      }),
    )
    .execute();
}

export async function queryStateObjects(db: Executor, globs: StateObjectGlobs): Promise<StateObjectRow[]> {
  return db
    .selectFrom('state_objects')
    .selectAll()
    .where(sql<boolean>`sentinel_name glob ${globs.sentinel}`)
    .where(sql<boolean>`package_name glob ${globs.package}`)
    .where(sql<boolean>`name glob ${globs.name}`)
    .where(sql<boolean>`type glob ${globs.type}`)
    .orderBy('sentinel_name')
    .orderBy('package_name')
    .orderBy('name')
    .execute();
}

/** Deletes the producer's objects matching name and type; returns what was deleted. */
export async function deleteStateObjects(
  db: Executor,
  producer: { sentinelName: string; packageName: string },
  globs: { name: string; type: string },
): Promise<{ name: string; type: string }[]> {
  return db
    .deleteFrom('state_objects')
    .where('sentinel_name', '=', producer.sentinelName)
    .where('package_name', '=', producer.packageName)
    .where(sql<boolean>`name glob ${globs.name}`)
    .where(sql<boolean>`type glob ${globs.type}`)
    .returning(['name', 'type'])
    .execute();
}

/**
 * Records that an object changed for every subscription with a matching filter (one row per
 * subscription and object, however often it changes) and returns those subscriptions' ids.
 */
export async function recordChange(
  db: Executor,
  object: StateObjectKey & { type: string },
  isDeleted: boolean,
): Promise<string[]> {
  const rows = await db
    .insertInto('state_object_changes')
    .columns(['subscription_id', 'sentinel_name', 'package_name', 'name', 'type', 'is_deleted'])
    .expression((eb) =>
      eb
        .selectFrom('state_object_filters')
        .select([
          'subscription_id',
          eb.val(object.sentinelName).as('sentinel_name'),
          eb.val(object.packageName).as('package_name'),
          eb.val(object.name).as('name'),
          eb.val(object.type).as('type'),
          eb.val(isDeleted ? 1 : 0).as('is_deleted'),
        ])
        .distinct()
        .where((w) => w.or([w('exact_name', '=', object.name), w('exact_name', 'is', null)]))
        .where(sql<boolean>`${object.sentinelName} glob sentinel_glob`)
        .where(sql<boolean>`${object.packageName} glob package_glob`)
        .where(sql<boolean>`${object.name} glob name_glob`)
        .where(sql<boolean>`${object.type} glob type_glob`),
    )
    .onConflict((oc) =>
      oc.columns(['subscription_id', 'sentinel_name', 'package_name', 'name']).doUpdateSet((eb) => ({
        type: eb.ref('excluded.type'),
        is_deleted: eb.ref('excluded.is_deleted'),
      })),
    )
    .returning('subscription_id')
    .execute();
  return rows.map((r) => r.subscription_id);
}

/** Queues every existing object matching `globs` for a subscription (its first poll shows them). */
export async function recordCurrentObjects(db: Executor, subscriptionId: string, globs: StateObjectGlobs): Promise<void> {
  await db
    .insertInto('state_object_changes')
    .columns(['subscription_id', 'sentinel_name', 'package_name', 'name', 'type', 'is_deleted'])
    .expression((eb) =>
      eb
        .selectFrom('state_objects')
        .select([
          eb.val(subscriptionId).as('subscription_id'),
          'sentinel_name',
          'package_name',
          'name',
          'type',
          eb.val(0).as('is_deleted'),
        ])
        .where(sql<boolean>`sentinel_name glob ${globs.sentinel}`)
        .where(sql<boolean>`package_name glob ${globs.package}`)
        .where(sql<boolean>`name glob ${globs.name}`)
        .where(sql<boolean>`type glob ${globs.type}`),
    )
    .onConflict((oc) =>
      oc.columns(['subscription_id', 'sentinel_name', 'package_name', 'name']).doUpdateSet({ is_deleted: 0 }),
    )
    .execute();
}

/** Reads and removes the oldest `limit` (0 = all) changes of a subscription. Call inside a transaction. */
export async function takeChanges(db: Executor, subscriptionId: string, limit: number): Promise<StateObjectChange[]> {
  let query = db
    .selectFrom('state_object_changes as c')
    .leftJoin('state_objects as s', (join) =>
      join
        .onRef('s.sentinel_name', '=', 'c.sentinel_name')
        .onRef('s.package_name', '=', 'c.package_name')
        .onRef('s.name', '=', 'c.name'),
    )
    .select([
      'c.id as change_id',
      'c.sentinel_name',
      'c.package_name',
      'c.name',
      'c.type as change_type',
      'c.is_deleted',
      's.type',
      's.value',
      's.metadatas',
      's.last_update_ms',
      's.lifetime_s',
      's.expires_at_ms',
      's.expiry_announced',
    ])
    .where('c.subscription_id', '=', subscriptionId)
    .orderBy('c.id');
  if (limit > 0) query = query.limit(limit);
  const rows = await query.execute();
  if (rows.length === 0) return [];
  await db
    .deleteFrom('state_object_changes')
    .where('subscription_id', '=', subscriptionId)
    .where('id', '<=', rows[rows.length - 1].change_id)
    .execute();
  return rows.map((r) => ({
    changeId: r.change_id,
    sentinelName: r.sentinel_name,
    packageName: r.package_name,
    name: r.name,
    type: r.type ?? r.change_type,
    current:
      r.is_deleted || r.value === null
        ? undefined
        : {
            sentinel_name: r.sentinel_name,
            package_name: r.package_name,
            name: r.name,
            type: r.type ?? r.change_type,
            value: r.value,
            metadatas: r.metadatas ?? '{}',
            last_update_ms: r.last_update_ms ?? 0,
            lifetime_s: r.lifetime_s ?? 0,
            expires_at_ms: r.expires_at_ms,
            expiry_announced: r.expiry_announced ?? 0,
          },
  }));
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

/** Marks objects whose lifetime has run out as announced, returning them so they can be announced. */
export async function markExpired(db: Executor, now: number): Promise<(StateObjectKey & { type: string })[]> {
  const rows = await db
    .updateTable('state_objects')
    .set({ expiry_announced: 1 })
    .where('expires_at_ms', 'is not', null)
    .where('expires_at_ms', '<=', now)
    .where('expiry_announced', '=', 0)
    .returning(['sentinel_name', 'package_name', 'name', 'type'])
    .execute();
  return rows.map((r) => ({ sentinelName: r.sentinel_name, packageName: r.package_name, name: r.name, type: r.type }));
}

export async function countStateObjects(db: Executor): Promise<number> {
  const row = await db.selectFrom('state_objects').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst();
  return Number(row?.n ?? 0);
}
