/** The package descriptors' port: one descriptor (JSON text) per package instance, a later declaration replaces the earlier. */

/** A package instance: the sentinel it runs on and its name there. */
export interface InstanceKey {
  sentinelName: string;
  packageName: string;
}

export interface DescriptorStore {
  save(instance: InstanceKey, descriptor: string, now: number): Promise<void>;
  find(instance: InstanceKey): Promise<string | undefined>;
  /** Every declared descriptor, by sentinel and package name. */
  all(): Promise<(InstanceKey & { descriptor: string })[]>;
}
