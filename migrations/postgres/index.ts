import type { Migration } from 'kysely';
import * as initial from './0001_initial.js';
import * as pendingDeliveries from './0002_pending_deliveries.js';
import * as configurationDocument from './0003_configuration_document.js';
import * as repositoryArchives from './0004_repository_archives.js';
import * as pollOrder from './0005_poll_order.js';
import * as authFailures from './0006_auth_failures.js';
import * as hubProcesses from './0007_hub_processes.js';
import * as credentialCounts from './0008_credential_counts.js';
import * as processFigures from './0009_process_figures.js';

/**
 * PostgreSQL's migrations (never SQLite's list: each engine has its own), by name; names sort in the
 * order they run. Never edit one that has landed.
 */
export const postgresMigrations: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_pending_deliveries': pendingDeliveries,
  '0003_configuration_document': configurationDocument,
  '0004_repository_archives': repositoryArchives,
  '0005_poll_order': pollOrder,
  '0006_auth_failures': authFailures,
  '0007_hub_processes': hubProcesses,
  '0008_credential_counts': credentialCounts,
  '0009_process_figures': processFigures,
};
