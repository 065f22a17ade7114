/**
 * The command line's work on a shared store (index.ts `sharedStore`): `hub config export|import` on the
 * configuration document it keeps, `hub migrate`'s copy of a data directory's SQLite file into it, and
 * what a failure to use it means, in words a user can act on. Each engine's modules load only when used.
 */
import type { Logger } from 'pino';
import type { ConfigurationDocumentStore } from '../hub/ports/configuration.js';
import type { StoreSettings } from './settings.js';
import { postgresProblem, redactedUrl } from './postgres/connections/problems.js';

type SharedStoreSettings = Pick<StoreSettings, 'databaseUrl' | 'lockWaitMs'>;

/** `settings`' database server, or a throw: the commands below are for a shared store only. */
function serverOf(settings: Pick<StoreSettings, 'databaseUrl'>): string {
  if (!settings.databaseUrl) throw new Error('no shared store in these settings');
  return settings.databaseUrl;
}

/** The configuration document the shared store keeps (its schema brought up to date first), until `close`. */
export async function openConfigurationDocuments(
  settings: SharedStoreSettings,
  log: Logger,
): Promise<{ documents: ConfigurationDocumentStore; close(): Promise<void> }> {
  const { openConfigurationDocuments: open } = await import('./postgres/ports/configuration.js');
  return open({ url: serverOf(settings), sync: 'full', lockWaitMs: settings.lockWaitMs, log });
}

/**
 * Copies the SQLite file `sqliteFile` (a stopped hub's hub.db) into the shared store, which must be
 * empty. Answers the rows copied per table, and where they went (no password).
 */
export async function copyIntoSharedStore(
  settings: SharedStoreSettings,
  sqliteFile: string,
  log: Logger,
): Promise<{ copied: Record<string, number>; into: string }> {
  const url = serverOf(settings);
  const { copySqliteToPostgres } = await import('./copy/fromSqlite.js');
  const copied = await copySqliteToPostgres({ sqliteFile, url, log });
  return { copied, into: redactedUrl(url) };
}

/**
 * Why the store `settings` choose could not be used (unreachable, refused, no such database …), in one
 * sentence a user can act on; undefined when `error` is no such problem.
 */
export function storeProblem(error: unknown, settings: Pick<StoreSettings, 'databaseUrl'>): string | undefined {
  return settings.databaseUrl ? postgresProblem(error, settings.databaseUrl) : undefined;
}
