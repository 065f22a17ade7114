/**
 * The notification channels besides the logs' doorbells, named in a module that loads nothing: createHub.ts
 * listens on them, and a hub on SQLite must not load the PostgreSQL engine to know their names.
 */

/** A change of the configuration document (configuration.ts), applied by every process. */
export const CONFIGURATION_CHANNEL = 'hub_configuration';

/** An address that reached the failed-authentication limit (authFailures.ts), blocked by every process. */
export const AUTH_FAILURE_CHANNEL = 'hub_auth';
