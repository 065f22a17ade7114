/** Per-instance activity for the console's overview: read-only aggregates, one query each. */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

type Executor = Kysely<Database>;

export interface InstanceKey {
  sentinelName: string;
  packageName: string;
}

export async function stateObjectCounts(db: Executor): Promise<(InstanceKey & { n: number })[]> {
  return db
    .selectFrom('state_objects')
    .select(['sentinel_name as sentinelName', 'package_name as packageName', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy(['sentinel_name', 'package_name'])
    .execute();
}

/** Queued messages and the last poll or subscribe, per caller identity (package callers and consumers). */
export async function subscriptionActivity(db: Executor): Promise<(InstanceKey & { queued: number; lastActiveMs: number })[]> {
  return db
    .selectFrom('subscriptions')
    .innerJoin('callers', 'callers.connection_id', 'subscriptions.owner_connection_id')
    .select([
      'callers.sentinel_name as sentinelName',
      'callers.package_name as packageName',
      (eb) => eb.fn.sum<number>('subscriptions.queued_messages').as('queued'),
      (eb) => eb.fn.max<number>('subscriptions.last_active_ms').as('lastActiveMs'),
    ])
    .groupBy(['callers.sentinel_name', 'callers.package_name'])
    .execute();
}

/** The newest WriteLog entry of each instance that wrote one. */
export async function lastLogs(db: Executor) {
  const newest = db.selectFrom('package_logs').select((eb) => eb.fn.max('id').as('id')).groupBy(['sentinel_name', 'package_name']);
  return db
    .selectFrom('package_logs')
    .select(['sentinel_name as sentinelName', 'package_name as packageName', 'level', 'message', 'logged_ms as loggedMs'])
    .where('id', 'in', newest)
    .execute();
}

export async function allDescriptors(db: Executor): Promise<(InstanceKey & { descriptor: string })[]> {
  return db
    .selectFrom('package_descriptors')
    .select(['sentinel_name as sentinelName', 'package_name as packageName', 'descriptor'])
    .orderBy('sentinel_name')
    .orderBy('package_name')
    .execute();
}
