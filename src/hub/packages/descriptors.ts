/** Package descriptors: declared by a package instance, read back by management. */
import type { DescriptorStore } from '../ports/descriptors.js';
import type { Caller } from '../access/caller.js';
import type { PackageDescriptor } from './descriptorSchema.js';

export class Descriptors {
  constructor(private readonly store: DescriptorStore) {}

  /** A later declaration replaces the earlier one. */
  declare(caller: Caller, descriptor: PackageDescriptor): Promise<void> {
    return this.store.save(caller, JSON.stringify(descriptor), Date.now());
  }

  async find(sentinelName: string, packageName: string): Promise<PackageDescriptor | undefined> {
    const text = await this.store.find({ sentinelName, packageName });
    return text === undefined ? undefined : (JSON.parse(text) as PackageDescriptor);
  }

  /** Every declared descriptor, by sentinel and package name. */
  async all(): Promise<{ SentinelName: string; PackageName: string; Descriptor: PackageDescriptor }[]> {
    const rows = await this.store.all();
    return rows.map((r) => ({
      SentinelName: r.sentinelName,
      PackageName: r.packageName,
      Descriptor: JSON.parse(r.descriptor) as PackageDescriptor,
    }));
  }
}
