/**
 * A whole store engine: one implementation of each port of this folder, the same set on every engine,
 * built once per hub by the engine's opener (src/store/index.ts `openStore` picks it) and handed out by
 * createHub.ts with what the engine can do beyond the ports (OpenedStore). Every operation is one
 * transaction whose promise settles after its COMMIT; no port exposes a statement, a transaction or a
 * connection.
 */
import type { ActivityStore } from './activity.js';
import type { CallerStore } from './callers.js';
import type { ConfigurationStore, SharedConfigurationDocument } from './configuration.js';
import type { DescriptorStore } from './descriptors.js';
import type { HubSettingStore } from './hubSettings.js';
import type { MessageStore } from './messages.js';
import type { OtherProcesses } from './otherProcesses.js';
import type { PackageLogStore } from './packageLogs.js';
import type { ProcessRegistryStore } from './processes.js';
import type { RepositoryStore } from './repository.js';
import type { StateObjectStore } from './stateObjects.js';
import type { DeliverySettling, SubscriptionStore } from './subscriptions.js';

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
  repository: RepositoryStore;
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

/**
 * A store as its engine's opener hands it to the composition root: the ports, and what the engine can
 * do beyond them, each named for what it does (none names an engine).
 */
export interface OpenedStore {
  readonly store: HubStore;
  /** How the pending delivery of an answer written whole ends (hub/polls/deliveries.ts). */
  readonly settling: DeliverySettling;
  /** The configuration as one document in the store that every process applies; none: it is the file. */
  readonly sharedConfiguration: SharedConfigurationDocument | undefined;
  /**
   * Other hub processes may share the store: what this one tells them and hears from them (their
   * commits wake its polls from the moment the store is open). None: this process is the store's only user.
   */
  readonly otherProcesses: OtherProcesses | undefined;
  /** Stops hearing the other processes, then closes the store (HubStore.close). */
  close(): Promise<void>;
}
