/**
 * The notification channels besides the logs' doorbells: the ports that notify on them, and the opener
 * (openedStore.ts) that listens on them for the hub, name them here.
 */

/** A change of the configuration document (configuration.ts), applied by every process. */
export const CONFIGURATION_CHANNEL = 'hub_configuration';

/** An address that reached the failed-authentication limit (authFailures.ts), blocked by every process. */
export const AUTH_FAILURE_CHANNEL = 'hub_auth';
