/** Package descriptors: declared by a package instance, read back by management. */
import type { Db } from '../db/open.js';
import { findDescriptor, saveDescriptor } from '../store/descriptors.js';
import type { Caller } from './caller.js';
import type { PackageDescriptor } from './descriptorSchema.js';

export class Descriptors {
  constructor(private readonly db: Db) {}

  /** A later declaration replaces the earlier one. */
  declare(caller: Caller, descriptor: PackageDescriptor): Promise<void> {
    return saveDescriptor(this.db, caller.sentinelName, caller.packageName, JSON.stringify(descriptor), Date.now());
  }

  async find(sentinelName: string, packageName: string): Promise<PackageDescriptor | undefined> {
    const text = await findDescriptor(this.db, sentinelName, packageName);
    return text === undefined ? undefined : (JSON.parse(text) as PackageDescriptor);
  }
}
