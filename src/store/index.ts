/**
 * The one way into a store: the settings choose the engine (PostgreSQL with HUB_DATABASE_URL, otherwise
 * SQLite in the data directory), and only that engine's modules load (a hub on SQLite never loads `pg`).
 * What differs between the engines comes back as capabilities named for what they do (OpenedStore).
 */
import type { HubStore, OpenedStore } from '../hub/ports/hubStore.js';
import type { StoreDependencies, StoreSettings } from './settings.js';
import type { OpenedDatabase } from './sqlite/database/open.js';

/** The SQLite file under each store opened on SQLite. */
const sqliteFiles = new WeakMap<HubStore, OpenedDatabase>();

/**
 * Opens the store `settings` choose (migrated, its upkeep running) and, on a store other processes may
 * share, starts hearing what they commit, announced to `deps.announce`.
 */
export async function openStore(settings: StoreSettings, deps: StoreDependencies): Promise<OpenedStore> {
  const { databaseUrl } = settings;
  if (databaseUrl) {
    const { openPostgresStore } = await import('./postgres/openedStore.js');
    return openPostgresStore({ ...settings, databaseUrl }, deps);
  }
  const { openSqliteStore } = await import('./sqlite/openedStore.js');
  const opened = await openSqliteStore(settings, deps);
  sqliteFiles.set(opened.store, opened.store.database);
  return opened;
}

/** The SQLite file under `store` (pragmas, a second look at the rows: the hub's own tests and tools); none on another engine. */
export const sqliteDatabaseOf = (store: HubStore): OpenedDatabase | undefined => sqliteFiles.get(store);

/**
 * Whether `settings` choose a store other hub processes may share (a database server), known before it
 * is opened. Such a store keeps the configuration as its document (OpenedStore.sharedConfiguration;
 * otherwise the file is the configuration), and it is what `hub migrate` copies a data directory into.
 */
export const sharedStore = (settings: Pick<StoreSettings, 'databaseUrl'>): boolean => Boolean(settings.databaseUrl);
