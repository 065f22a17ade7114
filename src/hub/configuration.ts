/**
 * The applied configuration: the XML file is the configuration (the administrator's), memory holds it
 * for every request, and the tables keep its history. Every change of it (a management write, a reload
 * or SIGHUP, a posted file) runs under one FIFO mutex and reads what it builds on (the file, or memory)
 * inside it, so no change can put back a configuration older than the one it replaces. Each change: the
 * new text is written beside the file and fsynced, the version is committed to the history table, the
 * file is renamed into place, and only then is the in-memory copy swapped. A failure at any step undoes
 * the steps before it: file, tables and memory stay on one version.
 *
 * A management write edits the file in place (xmlEdit.ts). It refuses (409) when the file on disk is no
 * longer the text the hub last applied or wrote (a hand edit, or `POST configuration` not yet reloaded):
 * applying on top would either drop that change or apply it unasked.
 */
import { Mutex } from 'async-mutex';
import { isDeepStrictEqual } from 'node:util';
import { readConfigurationText, stageFile } from '../config/configFile.js';
import type { Credential, HubConfiguration, PackageInstance, Sentinel } from '../config/model.js';
import { Immer } from 'immer';
import { editTextOffLoop } from '../config/offLoop.js';
import { validateConfiguration } from '../config/validate.js';
import { hubError } from '../errors.js';
import type { ConfigurationStore, ConfigurationVersion } from './ports/configuration.js';

export interface InstanceRef {
  sentinel: Sentinel;
  instance: PackageInstance;
}

/** Who made a change and why, for the history. */
export interface ChangeOrigin {
  by: string;
  reason: string;
}

export const pendingFileConflict = () => hubError('ConfigurationFilePending');

// Drafts share every part a change does not touch (structural sharing), so making one costs nothing
// however large the configuration; nothing is frozen, as the rest of the code only reads it.
const immer = new Immer({ autoFreeze: false });

/** Lets the event loop run between two pieces of a long change. */
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

const groupsOf = (config: HubConfiguration) =>
  config.sentinels.map((s) => s.packages.map((p) => [s.name, p.name, p.groups]));
const sameGroups = (a: HubConfiguration, b: HubConfiguration) => isDeepStrictEqual(groupsOf(a), groupsOf(b));

export class Configuration {
  private config: HubConfiguration;
  /** The text of the file as the hub last applied or wrote it. */
  private fileText: string;
  // Lookups for every authenticated request, rebuilt whenever the configuration is swapped: O(1)
  // however many sentinels and instances, and no objects built per request.
  private byKey = new Map<string, Credential>();
  private byName = new Map<string, Credential>();
  private bySentinel = new Map<string, { sentinel: Sentinel; instances: Map<string, InstanceRef> }>();
  private settingsGroups = new Map<string, HubConfiguration['settingsGroups'][number]>();
  /** Every change of the configuration holds it from reading its base to the swap; waiters go in order. */
  private readonly changes = new Mutex();

  constructor(
    private readonly history: ConfigurationStore,
    private readonly configPath: string,
    initial: HubConfiguration,
    initialText: string,
  ) {
    this.config = initial;
    this.fileText = initialText;
    this.index();
  }

  get current(): HubConfiguration {
    return this.config;
  }

  /** The text the hub last applied or wrote. */
  get appliedText(): string {
    return this.fileText;
  }

  /** Records the applied text in the history when it is not already its newest version (start-up). */
  async recordStart(origin: ChangeOrigin): Promise<void> {
    await this.history.applied(
      { writtenBy: origin.by, reason: origin.reason, applied: true, text: this.fileText },
      this.config,
      { unlessNewest: true },
    );
  }

  /**
   * Applies the file as it is on disk now (reload, SIGHUP): `read` turns its text (undefined: no file)
   * into the configuration it starts, or throws changing nothing. A file that is the text already
   * applied changes nothing. Returns the configurations before and after, or undefined when nothing was new.
   */
  reload(
    read: (text: string | undefined) => Promise<HubConfiguration>,
    origin: ChangeOrigin,
  ): Promise<{ before: HubConfiguration; after: HubConfiguration } | undefined> {
    return this.changes.runExclusive(async () => {
      const text = await readConfigurationText(this.configPath);
      if (text === this.fileText) return undefined;
      const next = await read(text); // throws when there is no file
      validateConfiguration(next);
      await this.history.applied(
        { writtenBy: origin.by, reason: origin.reason, applied: true, text: text as string },
        next,
        { unlessNewest: false },
      );
      const before = this.config;
      this.swap(next, text as string);
      return { before, after: next };
    });
  }

  /** Replaces the file with `text` without applying it (`POST configuration`): reload applies it. */
  saveText(text: string, origin: ChangeOrigin): Promise<void> {
    return this.changes.runExclusive(() =>
      this.writeFile(text, { writtenBy: origin.by, reason: origin.reason, applied: false, text }),
    );
  }

  /**
   * Runs `change` on a copy of the configuration and makes the result the file, the newest version
   * and the configuration in memory. Changes run one at a time, each on the result of the one before.
   * Returns the new configuration, which the edited file was checked to read back as (a restart gives it).
   */
  update(change: (draft: HubConfiguration) => void, origin: ChangeOrigin): Promise<HubConfiguration> {
    return this.changes.runExclusive(async () => {
      const onDisk = await readConfigurationText(this.configPath);
      if (onDisk !== undefined && onDisk !== this.fileText) throw pendingFileConflict();
      const draft = immer.produce(this.config, change);
      validateConfiguration(draft);
      await yieldToLoop();
      // The edit is read back and compared with the draft before anything is written. A file removed
      // behind the hub's back is written again from the applied text.
      const text = await editTextOffLoop(this.fileText, draft);
      await this.writeFile(text, { writtenBy: origin.by, reason: origin.reason, applied: true, text }, draft);
      return this.config;
    });
  }

  /** Staged file, committed version, rename, swap: each failure undoes what came before it. */
  private async writeFile(text: string, version: ConfigurationVersion, apply?: HubConfiguration): Promise<void> {
    const staged = await stageFile(this.configPath, text);
    let versionId: number;
    try {
      versionId = await this.history.record(version, apply && !sameGroups(apply, this.config) ? apply : undefined);
    } catch (error) {
      await staged.discard();
      throw error;
    }
    try {
      // A management write checked the file before its edit; a hand edit saved since is not overwritten.
      if (!(await staged.install(apply ? this.fileText : undefined))) throw pendingFileConflict();
    } catch (error) {
      await staged.discard();
      // Back to the version before: the history row goes, and the groups are those of memory again.
      await this.history.revert(versionId, apply ? this.config : undefined).catch(() => undefined);
      throw error;
    }
    if (apply) this.swap(apply, text);
  }

  private swap(next: HubConfiguration, text: string): void {
    this.config = next;
    this.fileText = text;
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
