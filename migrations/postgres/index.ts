import type { Migration } from 'kysely';
import * as initial from './0001_initial.js';
import * as pendingDeliveries from './0002_pending_deliveries.js';

/**
 * PostgreSQL's migrations (never SQLite's list: each engine has its own), by name; names sort in the
 * order they run. Never edit one that has landed.
 */
export const postgresMigrations: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_pending_deliveries': pendingDeliveries,
};
