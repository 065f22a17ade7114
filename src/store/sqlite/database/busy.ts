/**
 * The store's one translation of a database error: SQLite's "another connection holds the lock"
 * becomes the catalogue's DatabaseBusy, so neither the hub nor the HTTP layer ever sees SQLite's codes.
 * The group commit (store/sqlite/database/batch.ts) and Kysely's connection (store/sqlite/database/queuedDialect.ts) wait a while first and
 * translate only when they give up.
 */
import { hubError } from '../../../errors.js';

/** SQLite could not get a lock another connection holds (SQLITE_BUSY and its extended codes). */
export function isSqliteBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/** `error` as the store lets it out: the lock error as DatabaseBusy, anything else as it is. */
export const storeError = (error: unknown): unknown =>
  isSqliteBusy(error) ? hubError('DatabaseBusy', { engine: 'SQLite' }) : error;
