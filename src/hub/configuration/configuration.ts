/**
 * The applied configuration: memory holds it for every request (with lookups rebuilt at each swap),
 * and every change of it (a management write, a reload or SIGHUP, a posted document) runs under one
 * FIFO mutex and reads what it builds on inside it, so no change can put back a configuration older
 * than the one it replaces (docs/configuration.md, "Order of changes"). Where the document lives is the
 * subclass's: the XML file (FileConfiguration, configurationOnFile.ts: SQLite mode) or the database,
 * shared by every hub process (SharedConfiguration, configurationShared.ts: PostgreSQL mode).
 */
import { Mutex } from 'async-mutex';
import { isDeepStrictEqual } from 'node:util';
import type { Credential, HubConfiguration, PackageInstance, Sentinel } from '../../config/model.js';
import { Immer } from 'immer';

export interface InstanceRef {
  sentinel: Sentinel;
  instance: PackageInstance;
}

/** Who made a change and why, for the history. */
export interface ChangeOrigin {
  by: string;
  reason: string;
}

/** What a reload changed: the configurations before and after it. */
export interface Reloaded {
  before: HubConfiguration;
  after: HubConfiguration;
}

/** Turns a document's text (undefined: there is none) into the configuration it starts, or throws. */
export type ReadDocument = (text: string | undefined) => Promise<HubConfiguration>;

// Drafts share every part a change does not touch (structural sharing), so making one costs nothing
// however large the configuration; nothing is frozen, as the rest of the code only reads it.
const immer = new Immer({ autoFreeze: false });

/** Lets the event loop run between two pieces of a long change. */
export const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

const groupsOf = (config: HubConfiguration) =>
  config.sentinels.map((s) => s.packages.map((p) => [s.name, p.name, p.groups]));
export const sameGroups = (a: HubConfiguration, b: HubConfiguration) => isDeepStrictEqual(groupsOf(a), groupsOf(b));

export abstract class Configuration {
  private config: HubConfiguration;
  /** The text of the document as the hub last applied or wrote it. */
  private text: string;
  // Lookups for every authenticated request, rebuilt whenever the configuration is swapped: O(1)
  // however many sentinels and instances, and no objects built per request.
  private byKey = new Map<string, Credential>();
  private byName = new Map<string, Credential>();
  private bySentinel = new Map<string, { sentinel: Sentinel; instances: Map<string, InstanceRef> }>();
  private settingsGroups = new Map<string, HubConfiguration['settingsGroups'][number]>();
  /** Every change of the configuration holds it from reading its base to the swap; waiters go in order. */
  protected readonly changes = new Mutex();

  constructor(initial: HubConfiguration, initialText: string) {
    this.config = initial;
    this.text = initialText;
    this.index();
  }

  get current(): HubConfiguration {
    return this.config;
  }

  /** The text the hub last applied or wrote. */
  protected get appliedText(): string {
    return this.text;
  }

  /** Records the applied text in the history when it is not already its newest version (start-up). */
  abstract recordStart(origin: ChangeOrigin): Promise<void>;

  /** The document as `GET configuration` answers it: the text a reload would apply. */
  abstract readText(): Promise<string>;

  /**
   * Applies the document as it is now (reload, SIGHUP), changing nothing when it is the text already
   * applied. Returns the configurations before and after, or undefined when nothing was new.
   */
  abstract reload(read: ReadDocument, origin: ChangeOrigin): Promise<Reloaded | undefined>;

  /** Replaces the document with `text` without applying it (`POST configuration`): reload applies it. */
  abstract saveText(text: string, origin: ChangeOrigin): Promise<void>;

  /**
   * Runs `change` on a copy of the configuration and makes the result the document, the newest version
   * and the configuration in memory. Changes run one at a time, each on the result of the one before.
   * Returns the new configuration.
   */
  abstract update(change: (draft: HubConfiguration) => void, origin: ChangeOrigin): Promise<HubConfiguration>;

  /** `change` applied to a copy of the configuration in memory. */
  protected draft(change: (draft: HubConfiguration) => void): HubConfiguration {
    return immer.produce(this.config, change);
  }

  protected swap(next: HubConfiguration, text: string): void {
    this.config = next;
    this.text = text;
    this.index();
  }

  private index(): void {
    this.settingsGroups = groupsByName(this.config);
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

  /** An instance's settings as the package sees them (resolveSettings below). */
  resolveSettings({ instance }: InstanceRef): Record<string, string> {
    return resolveSettings(this.settingsGroups, instance);
  }
}

const groupsByName = (config: HubConfiguration) => new Map(config.settingsGroups.map((group) => [group.name, group]));

/**
 * An instance's settings as the package sees them: imported settings groups in order (a later one
 * overrides an earlier one), then the instance's own settings, which win.
 */
function resolveSettings(
  groups: Map<string, HubConfiguration['settingsGroups'][number]>,
  instance: PackageInstance,
): Record<string, string> {
  // No prototype: a setting key such as "__proto__" is a key like any other.
  const resolved = Object.create(null) as Record<string, string>;
  for (const groupName of instance.imports) {
    for (const setting of groups.get(groupName)?.settings ?? []) resolved[setting.key] = setting.value;
  }
  for (const setting of instance.settings) resolved[setting.key] = setting.value;
  return resolved;
}

/** Every instance's resolved settings in `config`, by `sentinel/instance`. */
export function settingsByInstance(config: HubConfiguration): Map<string, Record<string, string>> {
  const groups = groupsByName(config);
  return new Map(
    config.sentinels.flatMap((s) =>
      s.packages.map((p) => [`${s.name}/${p.name}`, resolveSettings(groups, p)] as const),
    ),
  );
}
