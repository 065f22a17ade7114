/**
 * What the console's overview shows that the interfaces do not give in one call: each package
 * instance with its activity, and every declared Package Descriptor at once.
 */
import type { ActivityStore } from './ports/activity.js';
import type { Configuration } from './configuration/configuration.js';
import type { PackageDescriptor } from './packages/descriptorSchema.js';
import type { Descriptors } from './packages/descriptors.js';

/** A package whose subscription was used this recently is shown as connected (a long-poll lasts ≤ 120 s). */
export const CONNECTED_WITHIN_MS = 150_000;

const keyOf = (sentinelName: string, packageName: string) => `${sentinelName}\u0000${packageName}`;

export class Overview {
  constructor(
    private readonly store: ActivityStore,
    private readonly declared: Descriptors,
    private readonly configuration: Configuration,
  ) {}

  async sentinels(now = Date.now()) {
    const { stateObjects: counts, subscriptions: activity, lastLogs: logs } = await this.store.instances();
    const countBy = new Map(counts.map((c) => [keyOf(c.sentinelName, c.packageName), Number(c.n)]));
    const activityBy = new Map(activity.map((a) => [keyOf(a.sentinelName, a.packageName), a]));
    const logBy = new Map(logs.map((l) => [keyOf(l.sentinelName, l.packageName), l]));
    return this.configuration.current.sentinels.map((sentinel) => ({
      Name: sentinel.name,
      Credential: sentinel.credential,
      Packages: sentinel.packages.map((instance) => {
        const key = keyOf(sentinel.name, instance.name);
        const seen = activityBy.get(key);
        const log = logBy.get(key);
        const lastSeen = seen ? Number(seen.lastActiveMs) : undefined;
        return {
          Name: instance.name,
          Enable: instance.enable,
          Groups: instance.groups,
          Connected: lastSeen !== undefined && now - lastSeen <= CONNECTED_WITHIN_MS,
          LastSeen: lastSeen === undefined ? null : new Date(lastSeen).toISOString(),
          StateObjects: countBy.get(key) ?? 0,
          QueuedMessages: seen ? Number(seen.queued) : 0,
          LastLog: log ? { Level: log.level, Message: log.message, Date: new Date(log.loggedMs).toISOString() } : null,
        };
      }),
    }));
  }

  descriptors(): Promise<{ SentinelName: string; PackageName: string; Descriptor: PackageDescriptor }[]> {
    return this.declared.all();
  }
}
