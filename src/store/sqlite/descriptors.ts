/** Package descriptors on SQLite (the DescriptorStore): one per instance, the latest declaration wins. */
import type { Db } from './database/open.js';
import type { DescriptorStore, InstanceKey } from '../../hub/ports/descriptors.js';

export class SqliteDescriptorStore implements DescriptorStore {
  constructor(private readonly db: Db) {}

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
