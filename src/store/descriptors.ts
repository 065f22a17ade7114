/** Package descriptors declared by package instances (one per instance, the latest wins). */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

type Executor = Kysely<Database>;

export async function saveDescriptor(
  db: Executor,
  sentinelName: string,
  packageName: string,
  descriptor: string,
  now: number,
): Promise<void> {
  await db
    .insertInto('package_descriptors')
    .values({ sentinel_name: sentinelName, package_name: packageName, descriptor, declared_ms: now })
    .onConflict((oc) =>
      oc.columns(['sentinel_name', 'package_name']).doUpdateSet({ descriptor, declared_ms: now }),
    )
    .execute();
}

export async function findDescriptor(db: Executor, sentinelName: string, packageName: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('package_descriptors')
    .select('descriptor')
    .where('sentinel_name', '=', sentinelName)
    .where('package_name', '=', packageName)
    .executeTakeFirst();
  return row?.descriptor;
}
