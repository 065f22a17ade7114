/** Package descriptors declared by package instances, one per instance, the latest wins (the SQLite DescriptorBook). */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { DescriptorBook, InstanceKey } from './engine.js';

export class DescriptorStore implements DescriptorBook {
  constructor(private readonly db: Kysely<Database>) {}

  async save({ sentinelName, packageName }: InstanceKey, descriptor: string, now: number): Promise<void> {
    await this.db
      .insertInto('package_descriptors')
      .values({ sentinel_name: sentinelName, package_name: packageName, descriptor, declared_ms: now })
      .onConflict((oc) => oc.columns(['sentinel_name', 'package_name']).doUpdateSet({ descriptor, declared_ms: now }))
      .execute();
  }

  async find({ sentinelName, packageName }: InstanceKey): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('package_descriptors')
      .select('descriptor')
      .where('sentinel_name', '=', sentinelName)
      .where('package_name', '=', packageName)
      .executeTakeFirst();
    return row?.descriptor;
  }

  all(): Promise<(InstanceKey & { descriptor: string })[]> {
    return this.db
      .selectFrom('package_descriptors')
      .select(['sentinel_name as sentinelName', 'package_name as packageName', 'descriptor'])
      .orderBy('sentinel_name')
      .orderBy('package_name')
      .execute();
  }
}
