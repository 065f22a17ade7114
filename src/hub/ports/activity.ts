/** The console overview's port: per-instance activity, read-only. */
import type { InstanceKey } from './descriptors.js';
import type { LogLevel } from './packageLogs.js';

export interface InstanceActivity {
  stateObjects: (InstanceKey & { n: number })[];
  /** Unread messages and the last poll or subscribe, per caller identity. */
  subscriptions: (InstanceKey & { queued: number; lastActiveMs: number })[];
  /** The newest WriteLog entry of each instance that wrote one. */
  lastLogs: (InstanceKey & { level: LogLevel; message: string; loggedMs: number })[];
}

export interface ActivityStore {
  instances(): Promise<InstanceActivity>;
}
