/**
 * Management of the package instances of each sentinel (credential, groups, settings, recovery
 * options) and of the default recovery options; each change goes through Configuration.update.
 */
import type { PackageInstance, RecoveryOptions, Sentinel, Setting } from '../../config/model.js';
import { hubError } from '../../errors.js';
import type { ChangeOrigin, Configuration } from '../configuration/configuration.js';
import type { HubLicense } from '../configuration/license.js';
import type { Sentinels } from '../configuration/sentinels.js';
import { sentinelIn } from '../configuration/sentinels.js';

export interface InstanceInput {
  Name: string;
  PackageFile?: string | null;
  Enable?: boolean | null;
  Credential?: string | null;
  AutoStart?: boolean | null;
}

/** What tells which package files are in the repository (each package's name and file name). */
interface PackageFiles {
  packageFiles(): Promise<ReadonlySet<string>>;
}

const instanceIn = (sentinel: Sentinel | undefined, name: string) => sentinel?.packages.find((p) => p.name === name);

export const instanceRecord = (s: Sentinel, p: PackageInstance, stored: ReadonlySet<string>) => ({
  Sentinel: s.name,
  Name: p.name,
  PackageFile: p.packageFile ?? null,
  Enable: p.enable,
  Credential: p.credential ?? s.credential,
  AutoStart: p.autoStart,
  Groups: p.groups,
  IsVirtual: !p.packageFile,
  // The repository package it names was deleted (or never uploaded): the instance keeps working.
  PackageFileMissing: p.packageFile ? !stored.has(p.packageFile) : false,
});

export const recoveryRecord = (r: RecoveryOptions) => ({
  RestartAfterFailure: r.restartAfterFailure,
  NumberOfRetry: r.numberOfRetry,
  ResetCounterAfterMinutes: r.resetCounterAfterMinutes,
  RestartPackageAfterSeconds: r.restartPackageAfterSeconds,
});

/** A setting value from JSON: text and simple values stay values; objects and arrays become content. */
export function settingFromJson(key: string, value: unknown): Setting {
  if (typeof value === 'string') return { key, kind: 'value', value };
  if (value !== null && typeof value === 'object') return { key, kind: 'content', value: JSON.stringify(value) };
  return { key, kind: 'value', value: String(value) };
}

const settingValues = (instance: PackageInstance) => Object.fromEntries(instance.settings.map((s) => [s.key, s.value]));

export class PackageInstances {
  constructor(
    private readonly configuration: Configuration,
    private readonly sentinels: Sentinels,
    private readonly license: HubLicense,
    private readonly repository: PackageFiles,
  ) {}

  /** The instance and its sentinel, or NotFound (404) naming whichever is missing. */
  require(sentinelName: string, instanceName: string): { sentinel: Sentinel; instance: PackageInstance } {
    this.sentinels.require(sentinelName);
    const ref = this.configuration.instance(sentinelName, instanceName);
    if (!ref) throw hubError('PackageInstanceNotFound', { sentinel: sentinelName, instance: instanceName });
    return ref;
  }

  // The repository is read at each answer: another hub process on the same database may have changed it.
  async list(sentinelName: string) {
    const sentinel = this.sentinels.require(sentinelName);
    const stored = await this.repository.packageFiles();
    return sentinel.packages.map((p) => instanceRecord(sentinel, p, stored));
  }

  async get(sentinelName: string, instanceName: string) {
    const { sentinel, instance } = this.require(sentinelName, instanceName);
    return instanceRecord(sentinel, instance, await this.repository.packageFiles());
  }

  async upsert(sentinelName: string, input: InstanceInput, origin: ChangeOrigin) {
    this.sentinels.require(sentinelName);
    if (!this.configuration.instance(sentinelName, input.Name)) {
      const count = this.configuration.current.sentinels.reduce((n, s) => n + s.packages.length, 0);
      await this.license.checkLimit('instances', count + 1);
    }
    const next = await this.configuration.update((draft) => {
      const sentinel = sentinelIn(draft, sentinelName) as Sentinel;
      let instance = instanceIn(sentinel, input.Name);
      if (!instance) {
        instance = { name: input.Name, enable: true, autoStart: true, settings: [], imports: [], groups: [] };
        sentinel.packages.push(instance);
      }
      if (input.PackageFile !== undefined) instance.packageFile = input.PackageFile || undefined;
      if (input.Enable != null) instance.enable = input.Enable;
      if (input.AutoStart != null) instance.autoStart = input.AutoStart;
      // The sentinel's credential is the default: naming it explicitly stores no override.
      if (input.Credential !== undefined) {
        instance.credential =
          input.Credential && input.Credential !== sentinel.credential ? input.Credential : undefined;
      }
    }, origin);
    const sentinel = sentinelIn(next, sentinelName) as Sentinel;
    return instanceRecord(
      sentinel,
      instanceIn(sentinel, input.Name) as PackageInstance,
      await this.repository.packageFiles(),
    );
  }

  async delete(sentinelName: string, instanceName: string, origin: ChangeOrigin): Promise<void> {
    this.require(sentinelName, instanceName);
    await this.configuration.update((draft) => {
      const sentinel = sentinelIn(draft, sentinelName) as Sentinel;
      sentinel.packages = sentinel.packages.filter((p) => p.name !== instanceName);
    }, origin);
  }

  recovery(sentinelName: string, instanceName: string) {
    const { instance } = this.require(sentinelName, instanceName);
    return recoveryRecord(instance.recoveryOptions ?? this.configuration.current.recoveryOptions);
  }

  async setRecovery(sentinelName: string, instanceName: string, options: RecoveryOptions, origin: ChangeOrigin) {
    const instance = await this.change(
      sentinelName,
      instanceName,
      (p) => {
        p.recoveryOptions = options;
      },
      origin,
    );
    return recoveryRecord(instance.recoveryOptions as RecoveryOptions);
  }

  groups(sentinelName: string, instanceName: string): string[] {
    return this.require(sentinelName, instanceName).instance.groups;
  }

  async setGroups(
    sentinelName: string,
    instanceName: string,
    groups: string[],
    origin: ChangeOrigin,
  ): Promise<string[]> {
    const instance = await this.change(
      sentinelName,
      instanceName,
      (p) => {
        p.groups = [...new Set(groups)];
      },
      origin,
    );
    return instance.groups;
  }

  settings(sentinelName: string, instanceName: string): Record<string, string> {
    return settingValues(this.require(sentinelName, instanceName).instance);
  }

  async setSettings(sentinelName: string, instanceName: string, values: Record<string, unknown>, origin: ChangeOrigin) {
    const instance = await this.change(
      sentinelName,
      instanceName,
      (p) => {
        // A value sent back as it reads keeps the setting as written (a content setting stays content).
        const written = new Map(p.settings.map((s) => [s.key, s]));
        p.settings = Object.entries(values).map(([key, value]) => {
          const kept = written.get(key);
          return kept && typeof value === 'string' && kept.value === value ? kept : settingFromJson(key, value);
        });
      },
      origin,
    );
    return settingValues(instance);
  }

  /** The recovery options of every instance that has none of its own. */
  defaultRecovery() {
    return recoveryRecord(this.configuration.current.recoveryOptions);
  }

  async setDefaultRecovery(options: RecoveryOptions, origin: ChangeOrigin) {
    const next = await this.configuration.update((draft) => {
      draft.recoveryOptions = options;
    }, origin);
    return recoveryRecord(next.recoveryOptions);
  }

  /** Changes one instance in a configuration update; answers the instance as that update left it. */
  private async change(
    sentinelName: string,
    instanceName: string,
    change: (p: PackageInstance) => void,
    origin: ChangeOrigin,
  ) {
    this.require(sentinelName, instanceName);
    const next = await this.configuration.update((draft) => {
      const instance = instanceIn(sentinelIn(draft, sentinelName), instanceName);
      if (instance) change(instance);
    }, origin);
    return instanceIn(sentinelIn(next, sentinelName), instanceName) as PackageInstance;
  }
}
