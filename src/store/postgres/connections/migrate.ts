/**
 * Brings a PostgreSQL database to the schema of migrations/postgres/ with Kysely's Migrator.
 *
 * Safe when several processes start at once: Kysely's PostgreSQL adapter takes a session advisory
 * lock (`pg_advisory_lock`, with a one-hour lock_timeout for that statement) before it reads which
 * migrations ran, and runs the pending ones in one transaction; the others wait on the lock, then
 * find nothing to do (test/postgresFoundation.test.ts races them). Run it over a direct connection,
 * not through a transaction-mode PgBouncer (a session lock does not survive it).
 *
 * A database migrated by a newer hub (a migration this build does not know) is refused: Kysely
 * fails on an executed migration missing from the list, and so does this.
 */
import type { Kysely } from 'kysely';
import { Migrator } from 'kysely';
import { postgresMigrations } from '../../../../migrations/postgres/index.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function migratePostgres(db: Kysely<any>): Promise<{ applied: string[] }> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => postgresMigrations } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    // No migration ran (the database could not be reached, or its migrations not read): not a migration's fault.
    if (failed === undefined) throw error;
    throw new Error(`PostgreSQL migration ${failed} failed: ${(error as Error).message ?? String(error)}`, {
      cause: error,
    });
  }
  return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
}
