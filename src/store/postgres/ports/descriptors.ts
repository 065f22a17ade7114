/** Package descriptors on PostgreSQL (the PostgreSQL DescriptorStore): one statement per operation. */
import type pg from 'pg';
import type { DescriptorStore, InstanceKey } from '../../../hub/ports/descriptors.js';
import { query } from '../connections/transaction.js';

export class PostgresDescriptorStore implements DescriptorStore {
  constructor(private readonly pool: pg.Pool) {}

  async save({ sentinelName, packageName }: InstanceKey, descriptor: string, now: number): Promise<void> {
    await query(
      this.pool,
      `insert into package_descriptors (sentinel_name, package_name, descriptor, declared_ms) values ($1, $2, $3, $4)
      on conflict (sentinel_name, package_name) do update set descriptor = excluded.descriptor, declared_ms = excluded.declared_ms`,
      [sentinelName, packageName, descriptor, now],
    );
  }

  async find({ sentinelName, packageName }: InstanceKey): Promise<string | undefined> {
    const rows = await query<{ descriptor: string }>(
      this.pool,
      'select descriptor from package_descriptors where sentinel_name = $1 and package_name = $2',
      [sentinelName, packageName],
    );
    return rows[0]?.descriptor;
  }

  all(): Promise<(InstanceKey & { descriptor: string })[]> {
    return query(
      this.pool,
      `select sentinel_name as "sentinelName", package_name as "packageName", descriptor
      from package_descriptors order by sentinel_name, package_name`,
    );
  }
}
