/**
 * Management operations on the configuration: each change is applied to the tables and the XML file
 * through Configuration.update, and answers with the stored record (wire.md, "Management records").
 */
import { readConfigurationText } from '../config/configFile.js';
import type {
  Credential,
  CredentialAuthorizations,
  HubConfiguration,
  PackageInstance,
  RecoveryOptions,
  Sentinel,
  Setting,
} from '../config/model.js';
import { openAuthorizations } from '../config/model.js';
import { ConfigurationError, managementAccessProblem } from '../config/validate.js';
import { readConfigurationFile } from '../config/editor.js';
import type { ListenAddress } from '../listen.js';
import { listenAddresses, parseListenUri } from '../listen.js';
import { conflict, notFound } from '../errors.js';
import type { HubSettings } from '../store/engine.js';
import type { Caller } from './caller.js';
import type { ChangeOrigin, Configuration } from './configuration.js';
import type { License } from './license.js';
import { communityLicense, licenseRecord } from './license.js';
import type { Messages } from './messages.js';

export const SETTINGS_UPDATED_KEY = '__SettingsUpdated';

/** A change the hub makes without a request (tests, tools). */
const hubOrigin: ChangeOrigin = { by: '(hub)', reason: 'change' };

// Lookups in one given configuration: a draft being changed, or the result a change returned (the
// live Configuration may already hold a later change by the time the caller reads it).
const sentinelIn = (config: HubConfiguration, name: string) => config.sentinels.find((s) => s.name === name);
const instanceIn = (sentinel: Sentinel | undefined, name: string) => sentinel?.packages.find((p) => p.name === name);
const credentialIn = (config: HubConfiguration, name: string) => config.credentials.find((c) => c.name === name);

export interface InstanceInput {
  Name: string;
  PackageFile?: string | null;
  Enable?: boolean | null;
  Credential?: string | null;
  AutoStart?: boolean | null;
}

export interface CredentialInput {
  Name: string;
  AccessKey: string;
  Enable?: boolean | null;
  EnableControlHub?: boolean | null;
  EnableManagementAPI?: boolean | null;
  EnableDeveloperAccess?: boolean | null;
}

export const sentinelRecord = (s: Sentinel) => ({ Name: s.name, Credential: s.credential, Packages: s.packages.map((p) => p.name) });

export const instanceRecord = (s: Sentinel, p: PackageInstance, repository?: { has(file: string): boolean }) => ({
  Sentinel: s.name,
  Name: p.name,
  PackageFile: p.packageFile ?? null,
  Enable: p.enable,
  Credential: p.credential ?? s.credential,
  AutoStart: p.autoStart,
  Groups: p.groups,
  IsVirtual: !p.packageFile,
  // The repository package it names was deleted (or never uploaded): the instance keeps working.
  PackageFileMissing: p.packageFile ? !(repository?.has(p.packageFile) ?? true) : false,
});

export const credentialRecord = (c: Credential, withKey: boolean) => ({
  Name: c.name,
  ...(withKey ? { AccessKey: c.accessKey } : {}),
  Enable: c.enable,
  EnableControlHub: c.enableControlHub,
  EnableManagementAPI: c.enableManagementAPI,
  EnableDeveloperAccess: c.enableDeveloperAccess,
});

export const recoveryRecord = (r: RecoveryOptions) => ({
  RestartAfterFailure: r.restartAfterFailure,
  NumberOfRetry: r.numberOfRetry,
  ResetCounterAfterMinutes: r.resetCounterAfterMinutes,
  RestartPackageAfterSeconds: r.restartPackageAfterSeconds,
});

export const authorizationsRecord = (a: CredentialAuthorizations) => ({
  StateObjects: {
    DefaultAuthorization: a.stateObjects.defaultAuthorization,
    Authorizations: a.stateObjects.rules.map((r) => ({
      Id: r.id, Authorization: r.authorization, SentinelName: r.sentinelName, PackageName: r.packageName, Name: r.name,
    })),
  },
  Messages: {
    DefaultAuthorization: a.messages.defaultAuthorization,
    Authorizations: a.messages.rules.map((r) => ({
      Id: r.id, Authorization: r.authorization, Scope: r.scope, Args: r.args, MessageKey: r.messageKey,
    })),
  },
  Groups: {
    DefaultAuthorization: a.groups.defaultAuthorization,
    Authorizations: a.groups.rules.map((r) => ({ Id: r.id, Authorization: r.authorization, GroupName: r.groupName })),
  },
});

/** A setting value from JSON: text and simple values stay values; objects and arrays become content. */
export function settingFromJson(key: string, value: unknown): Setting {
  if (typeof value === 'string') return { key, kind: 'value', value };
  if (value !== null && typeof value === 'object') return { key, kind: 'content', value: JSON.stringify(value) };
  return { key, kind: 'value', value: String(value) };
}

export class Management {
  constructor(
    private readonly hubSettings: HubSettings,
    private readonly configuration: Configuration,
    private readonly messages: Messages,
    private readonly configPath: string,
    private readonly repository: { has(file: string): boolean },
    /** Throws when this hub could not serve the address (an https URI without a certificate). */
    private readonly checkListen: (address: ListenAddress) => void = () => undefined,
  ) {}

  private get config(): HubConfiguration {
    return this.configuration.current;
  }

  requireSentinel(name: string): Sentinel {
    const sentinel = this.configuration.sentinel(name);
    if (!sentinel) throw notFound(`The sentinel '${name}' does not exist.`);
    return sentinel;
  }

  requireInstance(sentinelName: string, instanceName: string): { sentinel: Sentinel; instance: PackageInstance } {
    this.requireSentinel(sentinelName);
    const ref = this.configuration.instance(sentinelName, instanceName);
    if (!ref) throw notFound(`The package instance '${instanceName}' does not exist on sentinel '${sentinelName}'.`);
    return ref;
  }

  requireCredential(name: string): Credential {
    const credential = this.configuration.credential(name);
    if (!credential) throw notFound(`The credential '${name}' does not exist.`);
    return credential;
  }

  /** Changes one package instance inside a configuration update. */
  private async updateInstance(sentinelName: string, instanceName: string, change: (p: PackageInstance) => void, origin: ChangeOrigin) {
    this.requireInstance(sentinelName, instanceName);
    const next = await this.configuration.update((draft) => {
      const instance = instanceIn(sentinelIn(draft, sentinelName), instanceName);
      if (instance) change(instance);
    }, origin);
    const sentinel = sentinelIn(next, sentinelName) as Sentinel;
    return { sentinel, instance: instanceIn(sentinel, instanceName) as PackageInstance };
  }

  // ---- license ----
  async license(): Promise<License> {
    const text = await this.hubSettings.license();
    return text ? (JSON.parse(text) as License) : communityLicense;
  }

  async licenseRecord() {
    return licenseRecord(await this.license(), Date.now());
  }

  async setLicense(license: License) {
    await this.hubSettings.setLicense(JSON.stringify(license));
    return licenseRecord(license, Date.now());
  }

  private async checkLimit(kind: 'sentinels' | 'instances', wouldHave: number): Promise<void> {
    const license = await this.license();
    const max = kind === 'sentinels' ? license.MaxSentinels : license.MaxPackageInstances;
    if (max !== null && max !== undefined && wouldHave > max) {
      const limit = kind === 'sentinels' ? 'MaxSentinels' : 'MaxPackageInstances';
      throw conflict('LicenseLimit', `The license allows at most ${max} ${kind === 'sentinels' ? 'sentinels' : 'package instances'} (${limit}).`);
    }
  }

  // ---- sentinels ----
  sentinels() {
    return this.config.sentinels.map(sentinelRecord);
  }

  async upsertSentinel(name: string, credential: string, origin: ChangeOrigin = hubOrigin) {
    if (!this.configuration.sentinel(name)) await this.checkLimit('sentinels', this.config.sentinels.length + 1);
    const next = await this.configuration.update((draft) => {
      const existing = sentinelIn(draft, name);
      if (existing) existing.credential = credential;
      else draft.sentinels.push({ name, credential, packages: [] });
    }, origin);
    return sentinelRecord(sentinelIn(next, name) as Sentinel);
  }

  async deleteSentinel(name: string, origin: ChangeOrigin): Promise<void> {
    this.requireSentinel(name);
    await this.configuration.update((draft) => {
      draft.sentinels = draft.sentinels.filter((s) => s.name !== name);
    }, origin);
  }

  // ---- package instances ----
  instances(sentinelName: string) {
    const sentinel = this.requireSentinel(sentinelName);
    return sentinel.packages.map((p) => instanceRecord(sentinel, p, this.repository));
  }

  instance(sentinelName: string, instanceName: string) {
    const { sentinel, instance } = this.requireInstance(sentinelName, instanceName);
    return instanceRecord(sentinel, instance, this.repository);
  }

  async upsertInstance(sentinelName: string, input: InstanceInput, origin: ChangeOrigin) {
    this.requireSentinel(sentinelName);
    const isNew = !this.configuration.instance(sentinelName, input.Name);
    if (isNew) {
      const count = this.config.sentinels.reduce((n, s) => n + s.packages.length, 0);
      await this.checkLimit('instances', count + 1);
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
        instance.credential = input.Credential && input.Credential !== sentinel.credential ? input.Credential : undefined;
      }
    }, origin);
    const sentinel = sentinelIn(next, sentinelName) as Sentinel;
    return instanceRecord(sentinel, instanceIn(sentinel, input.Name) as PackageInstance, this.repository);
  }

  async deleteInstance(sentinelName: string, instanceName: string, origin: ChangeOrigin): Promise<void> {
    this.requireInstance(sentinelName, instanceName);
    await this.configuration.update((draft) => {
      const sentinel = sentinelIn(draft, sentinelName) as Sentinel;
      sentinel.packages = sentinel.packages.filter((p) => p.name !== instanceName);
    }, origin);
  }

  instanceRecovery(sentinelName: string, instanceName: string) {
    const { instance } = this.requireInstance(sentinelName, instanceName);
    return recoveryRecord(instance.recoveryOptions ?? this.config.recoveryOptions);
  }

  async setInstanceRecovery(sentinelName: string, instanceName: string, options: RecoveryOptions, origin: ChangeOrigin) {
    const { instance } = await this.updateInstance(sentinelName, instanceName, (p) => {
      p.recoveryOptions = options;
    }, origin);
    return recoveryRecord(instance.recoveryOptions as RecoveryOptions);
  }

  groups(sentinelName: string, instanceName: string): string[] {
    return this.requireInstance(sentinelName, instanceName).instance.groups;
  }

  async setGroups(sentinelName: string, instanceName: string, groups: string[], origin: ChangeOrigin): Promise<string[]> {
    const { instance } = await this.updateInstance(sentinelName, instanceName, (p) => {
      p.groups = [...new Set(groups)];
    }, origin);
    return instance.groups;
  }

  settings(sentinelName: string, instanceName: string): Record<string, string> {
    const { instance } = this.requireInstance(sentinelName, instanceName);
    return Object.fromEntries(instance.settings.map((s) => [s.key, s.value]));
  }

  async setSettings(sentinelName: string, instanceName: string, values: Record<string, unknown>, origin: ChangeOrigin) {
    const { instance } = await this.updateInstance(sentinelName, instanceName, (p) => {
      // A value sent back as it reads keeps the setting as written (a content setting stays content).
      const written = new Map(p.settings.map((s) => [s.key, s]));
      p.settings = Object.entries(values).map(([key, value]) => {
        const kept = written.get(key);
        return kept && typeof value === 'string' && kept.value === value ? kept : settingFromJson(key, value);
      });
    }, origin);
    return Object.fromEntries(instance.settings.map((s) => [s.key, s.value]));
  }

  // ---- recovery options (global) ----
  globalRecovery() {
    return recoveryRecord(this.config.recoveryOptions);
  }

  async setGlobalRecovery(options: RecoveryOptions, origin: ChangeOrigin) {
    const next = await this.configuration.update((draft) => {
      draft.recoveryOptions = options;
    }, origin);
    return recoveryRecord(next.recoveryOptions);
  }

  // ---- credentials ----
  credentials(includeAccessKeys: boolean) {
    return this.config.credentials.map((c) => credentialRecord(c, includeAccessKeys));
  }

  async upsertCredential(input: CredentialInput, origin: ChangeOrigin) {
    const next = await this.configuration.update((draft) => {
      let credential = credentialIn(draft, input.Name);
      if (!credential) {
        credential = {
          name: input.Name,
          accessKey: input.AccessKey,
          enable: true,
          enableControlHub: false,
          enableManagementAPI: false,
          enableDeveloperAccess: false,
          authorizations: openAuthorizations(),
        };
        draft.credentials.push(credential);
      }
      credential.accessKey = input.AccessKey;
      if (input.Enable != null) credential.enable = input.Enable;
      if (input.EnableControlHub != null) credential.enableControlHub = input.EnableControlHub;
      if (input.EnableManagementAPI != null) credential.enableManagementAPI = input.EnableManagementAPI;
      if (input.EnableDeveloperAccess != null) credential.enableDeveloperAccess = input.EnableDeveloperAccess;
      this.keepManagementAccess(draft);
    }, origin);
    return credentialRecord(credentialIn(next, input.Name) as Credential, false);
  }

  async deleteCredential(name: string, origin: ChangeOrigin): Promise<void> {
    this.requireCredential(name);
    const users = [
      ...this.config.sentinels.filter((s) => s.credential === name).map((s) => `sentinel '${s.name}'`),
      ...this.config.sentinels.flatMap((s) =>
        s.packages.filter((p) => p.credential === name).map((p) => `package instance '${s.name}/${p.name}'`),
      ),
    ];
    if (users.length) throw conflict('CredentialInUse', `The credential '${name}' is used by ${users.join(', ')}.`);
    await this.configuration.update((draft) => {
      draft.credentials = draft.credentials.filter((c) => c.name !== name);
      this.keepManagementAccess(draft);
    }, origin);
  }

  /** Nobody could manage the hub again: refuse the change. */
  private keepManagementAccess(draft: HubConfiguration): void {
    if (!draft.credentials.some((c) => c.enable && c.enableManagementAPI)) {
      throw conflict('LastManagementCredential', 'This change would leave no enabled credential with the management right.');
    }
  }

  authorizations(name: string) {
    return authorizationsRecord(this.requireCredential(name).authorizations);
  }

  async setAuthorizations(name: string, authorizations: CredentialAuthorizations, origin: ChangeOrigin) {
    this.requireCredential(name);
    const next = await this.configuration.update((draft) => {
      const credential = credentialIn(draft, name) as Credential;
      credential.authorizations = authorizations;
    }, origin);
    return authorizationsRecord((credentialIn(next, name) as Credential).authorizations);
  }

  // ---- configuration file ----
  async configurationText(): Promise<string> {
    return (await readConfigurationText(this.configPath)) ?? '';
  }

  /**
   * Everything a start would check: the file reads and validates, its listen URIs can be served here,
   * and someone can still manage the hub. Throws ConfigurationError (400) naming the problem.
   */
  async checkStartable(text: string) {
    const file = await readConfigurationFile(text);
    const problem = managementAccessProblem(file.config);
    if (problem) throw new ConfigurationError(problem);
    try {
      listenAddresses(file.config.listenUris, {});
    } catch (error) {
      throw new ConfigurationError(`<listenUris>: ${(error as Error).message}`);
    }
    for (const uri of file.config.listenUris) this.checkListen(parseListenUri(uri));
    return file;
  }

  /** Validates as a start would, then replaces the file atomically; does not apply it (reload does). */
  async saveConfigurationText(text: string, origin: ChangeOrigin): Promise<void> {
    await this.checkStartable(text);
    await this.configuration.saveText(text, origin);
  }

  /**
   * Applies the file. With `deploy`, each package instance whose resolved settings changed (or that is
   * new) is sent `__SettingsUpdated` with its new settings. Listen URIs take effect at the next start.
   */
  async reload(deploy: boolean, by: Caller | undefined, origin: ChangeOrigin): Promise<{ deployedTo: string[] }> {
    const text = await readConfigurationText(this.configPath);
    if (text === undefined) throw notFound('The configuration file does not exist.');
    const { config: next } = await this.checkStartable(text);
    const before = this.resolvedSettingsByInstance();
    await this.configuration.applyText(text, next, origin);
    if (!deploy || !by) return { deployedTo: [] };
    const after = this.resolvedSettingsByInstance();
    const deployedTo: string[] = [];
    for (const [friendlyName, settings] of after) {
      if (JSON.stringify(before.get(friendlyName)) === JSON.stringify(settings)) continue;
      await this.messages.sendFromHub(by, friendlyName, SETTINGS_UPDATED_KEY, settings);
      deployedTo.push(friendlyName);
    }
    return { deployedTo };
  }

  private resolvedSettingsByInstance(): Map<string, Record<string, string>> {
    const out = new Map<string, Record<string, string>>();
    for (const sentinel of this.config.sentinels) {
      for (const instance of sentinel.packages) {
        out.set(`${sentinel.name}/${instance.name}`, this.configuration.resolveSettings({ sentinel, instance }));
      }
    }
    return out;
  }
}
