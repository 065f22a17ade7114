/**
 * The applied configuration: kept in memory for authentication on every request, in the configuration
 * tables for people and queries, and in the XML file for administrators. Every change goes through
 * `replace`, which commits the tables, then rewrites the file, then swaps the in-memory copy, so the
 * next request already sees it.
 */
import { writeFileAtomically } from '../config/configFile.js';
import type { Credential, HubConfiguration, PackageInstance, Sentinel } from '../config/model.js';
import { validateConfiguration } from '../config/validate.js';
import { serializeConfiguration } from '../config/xmlFile.js';
import type { Db } from '../db/open.js';
import { replaceConfiguration } from '../store/configuration.js';

export interface InstanceRef {
  sentinel: Sentinel;
  instance: PackageInstance;
}

export class Configuration {
  private config: HubConfiguration;
  // Lookups for every authenticated request, rebuilt whenever the configuration is swapped: O(1)
  // however many sentinels and instances, and no objects built per request.
  private byKey = new Map<string, Credential>();
  private byName = new Map<string, Credential>();
  private bySentinel = new Map<string, { sentinel: Sentinel; instances: Map<string, InstanceRef> }>();

  constructor(
    private readonly db: Db,
    private readonly configPath: string,
    initial: HubConfiguration,
  ) {
    this.config = initial;
    this.index();
  }

  get current(): HubConfiguration {
    return this.config;
  }

  /** Applies `next` to the tables (one transaction); with `writeFile`, also rewrites the XML file. */
  replace(next: HubConfiguration, options: { writeFile: boolean }): Promise<void> {
    return this.oneAtATime(() => this.apply(next, options));
  }

  /**
   * Runs `change` on a deep copy of the configuration and applies the result as a management write.
   * Changes run one at a time, each on the result of the one before, so none is lost.
   */
  update(change: (draft: HubConfiguration) => void): Promise<HubConfiguration> {
    return this.oneAtATime(async () => {
      const draft = structuredClone(this.config);
      change(draft);
      await this.apply(draft, { writeFile: true });
      return this.config;
    });
  }

  private async apply(next: HubConfiguration, options: { writeFile: boolean }): Promise<void> {
    validateConfiguration(next);
    await this.db.transaction().execute((trx) => replaceConfiguration(trx, next));
    if (options.writeFile) writeFileAtomically(this.configPath, serializeConfiguration(next));
    this.config = next;
    this.index();
  }

  private tail: Promise<unknown> = Promise.resolve();

  private oneAtATime<T>(work: () => Promise<T>): Promise<T> {
    const run = this.tail.then(work, work);
    this.tail = run.catch(() => undefined);
    return run;
  }

  private index(): void {
    this.byKey = new Map(this.config.credentials.map((c) => [c.accessKey, c]));
    this.byName = new Map(this.config.credentials.map((c) => [c.name, c]));
    this.bySentinel = new Map(
      this.config.sentinels.map((sentinel) => [
        sentinel.name,
        { sentinel, instances: new Map(sentinel.packages.map((instance) => [instance.name, { sentinel, instance }])) },
      ]),
    );
  }

  credentialByKey(accessKey: string): Credential | undefined {
    return this.byKey.get(accessKey);
  }

  credential(name: string): Credential | undefined {
    return this.byName.get(name);
  }

  sentinel(name: string): Sentinel | undefined {
    return this.bySentinel.get(name)?.sentinel;
  }

  instance(sentinelName: string, instanceName: string): InstanceRef | undefined {
    return this.bySentinel.get(sentinelName)?.instances.get(instanceName);
  }

  /** The credential an instance authenticates with: its own, else its sentinel's. */
  instanceCredential({ sentinel, instance }: InstanceRef): Credential | undefined {
    return this.credential(instance.credential ?? sentinel.credential);
  }

  /**
   * An instance's settings as the package sees them: imported settings groups in order (a later one
   * overrides an earlier one), then the instance's own settings, which win.
   */
  resolveSettings({ instance }: InstanceRef): Record<string, string> {
    const resolved: Record<string, string> = {};
    for (const groupName of instance.imports) {
      const group = this.config.settingsGroups.find((g) => g.name === groupName);
      for (const setting of group?.settings ?? []) resolved[setting.key] = setting.value;
    }
    for (const setting of instance.settings) resolved[setting.key] = setting.value;
    return resolved;
  }
}
