/** What every engine's opener is given: the hub's settings it reads, and what the hub hands it. */
import type { Logger } from 'pino';
import type { WakeUps } from '../hub/polls/wakeUps.js';
import type { HubMetrics } from '../metrics.js';
import type { HubOptions } from '../settings.js';

/** The settings that choose the engine and tune it. */
export type StoreSettings = Pick<
  HubOptions,
  | 'databaseUrl'
  | 'dataDir'
  | 'sync'
  | 'lockWaitMs'
  | 'messageQueueLimit'
  | 'messageRetentionMs'
  | 'maxSubscriptionsPerCredential'
  | 'vacuumIntervalMs'
  | 'pgPollMs'
  | 'pgPoolMax'
>;

/** What other processes commit is announced here, as this process's own writes announce theirs. */
export type CommitsElsewhere = Pick<
  WakeUps,
  'stateObjectChanged' | 'messageSent' | 'logWritten' | 'claimedElsewhere' | 'waitingCount'
>;

export interface StoreDependencies {
  logger: Logger;
  metrics: HubMetrics;
  /** This process's notifier. */
  announce: CommitsElsewhere;
}

/** Every COMMIT's duration in ms, and for a group commit how many pieces it held, into the metrics. */
export const committedInto =
  (metrics: HubMetrics) =>
  (commitMs: number, pieces?: number): void => {
    metrics.commitDuration.observe(commitMs / 1000);
    if (pieces !== undefined) metrics.batchSize.observe(pieces);
  };
