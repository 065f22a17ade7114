/**
 * A whole store engine: one implementation of each port of this folder, built once per hub by the
 * engine's opener (SQLite: store/sqlite/hubStore.ts) and handed out by createHub.ts. Every operation is
 * one transaction whose promise settles after its COMMIT; no port exposes a statement, a transaction or
 * a connection.
 */
import type { ActivityStore } from './activity.js';
import type { AuthFailureStore } from './authFailures.js';
import type { CallerStore } from './callers.js';
import type { ConfigurationDocumentStore, ConfigurationStore } from './configuration.js';
import type { DescriptorStore } from './descriptors.js';
import type { HubSettingStore } from './hubSettings.js';
import type { MessageStore } from './messages.js';
import type { PackageLogStore } from './packageLogs.js';
import type { ProcessRegistryStore } from './processes.js';
import type { RepositoryStore } from './repository.js';
import type { StateObjectStore } from './stateObjects.js';
import type { SubscriptionStore } from './subscriptions.js';

/** Row counts for the metrics, read at scrape time. */
export interface StoreCounts {
  subscriptions: { kind: string; n: number }[];
  queuedMessages: number;
  stateObjects: number;
}

export interface HubStore {
  stateObjects: StateObjectStore;
  messages: MessageStore;
  subscriptions: SubscriptionStore;
  packageLogs: PackageLogStore;
  callers: CallerStore;
  descriptors: DescriptorStore;
  activity: ActivityStore;
  hubSettings: HubSettingStore;
  configuration: ConfigurationStore;
  /** PostgreSQL only: the configuration document every process shares (SQLite's is the file). */
  configurationDocument?: ConfigurationDocumentStore;
  repository: RepositoryStore;
  /** Failed authentications counted across processes (PostgreSQL); none on SQLite (counted in memory). */
  authFailures?: AuthFailureStore;
  processes: ProcessRegistryStore;
  counts(): Promise<StoreCounts>;
  /**
   * One round trip to the database that fails within `timeoutMs` when it does not answer (`/ready`).
   * SQLite's file is in the process: it always answers.
   */
  ping(timeoutMs: number): Promise<void>;
  /** Stops the engine's own upkeep and closes it, leaving everything committed on disk. */
  close(): Promise<void>;
}
