/** The callers' port: every identity that has talked to the hub, with its stable ConnectionId. */

/** A caller identity as first seen; its ConnectionId stays the same across requests and restarts. */
export interface NewCaller {
  connectionId: string;
  friendlyName: string;
  kind: 'consumer' | 'package';
  sentinelName: string;
  packageName: string;
  firstSeenMs: number;
}

export interface CallerStore {
  /** The ConnectionId on record for the friendly name; records nothing. */
  connectionId(friendlyName: string): Promise<string | undefined>;
  /** Records the caller unless its friendly name is known already; either way returns the ConnectionId on record. */
  record(caller: NewCaller): Promise<string>;
}
