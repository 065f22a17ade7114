import type { Migration } from 'kysely';
import * as initial from './0001_initial.js';
import * as repository from './0002_repository.js';
import * as logsAndCursors from './0003_logs_and_cursors.js';
import * as configurationVersions from './0010_configuration_versions.js';
import * as pendingDeliveries from './0011_pending_deliveries.js';

/** Every migration, by name; names sort in the order they run. Never edit one that has landed. */
export const migrations: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_repository': repository,
  '0003_logs_and_cursors': logsAndCursors,
  '0010_configuration_versions': configurationVersions,
  '0011_pending_deliveries': pendingDeliveries,
};
