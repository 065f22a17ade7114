/** The hub's configuration as the rest of the code sees it: what the XML file says, after validation. */

export type Authorization = 'Allow' | 'Deny';

/**
 * Rule ids are text, as in Constellation's own files (`id="Paradox"`); numeric ids are text too. Rules
 * are tried in document order, whatever their ids.
 */
export interface StateObjectRule {
  id: string;
  authorization: Authorization;
  sentinelName: string;
  packageName: string;
  name: string;
}

export interface MessageRule {
  id: string;
  authorization: Authorization;
  scope: string;
  args: string;
  messageKey: string;
}

export interface GroupRule {
  id: string;
  authorization: Authorization;
  groupName: string;
}

export interface RuleSet<R> {
  defaultAuthorization: Authorization;
  rules: R[];
}

export interface CredentialAuthorizations {
  stateObjects: RuleSet<StateObjectRule>;
  messages: RuleSet<MessageRule>;
  groups: RuleSet<GroupRule>;
}

export interface Credential {
  name: string;
  accessKey: string;
  enable: boolean;
  enableControlHub: boolean;
  enableManagementAPI: boolean;
  enableDeveloperAccess: boolean;
  authorizations: CredentialAuthorizations;
}

export interface RecoveryOptions {
  restartAfterFailure: boolean;
  numberOfRetry: number;
  resetCounterAfterMinutes: number;
  restartPackageAfterSeconds: number;
}

/** `value` holds a simple value; `content` holds JSON text or an XML document, kept as text. */
export interface Setting {
  key: string;
  kind: 'value' | 'content';
  value: string;
}

export interface PackageInstance {
  name: string;
  enable: boolean;
  packageFile?: string;
  /** Own credential; when absent the instance uses its sentinel's. */
  credential?: string;
  autoStart: boolean;
  settings: Setting[];
  /** Settings groups imported, in order: a later import overrides an earlier one. */
  imports: string[];
  groups: string[];
  recoveryOptions?: RecoveryOptions;
}

export interface Sentinel {
  name: string;
  credential: string;
  packages: PackageInstance[];
}

export interface SettingsGroup {
  name: string;
  settings: Setting[];
}

export interface HubConfiguration {
  listenUris: string[];
  recoveryOptions: RecoveryOptions;
  credentials: Credential[];
  sentinels: Sentinel[];
  settingsGroups: SettingsGroup[];
}

export const defaultRecoveryOptions: RecoveryOptions = {
  restartAfterFailure: true,
  numberOfRetry: 3,
  resetCounterAfterMinutes: 15,
  restartPackageAfterSeconds: 30,
};

export const openAuthorizations = (): CredentialAuthorizations => ({
  stateObjects: { defaultAuthorization: 'Allow', rules: [] },
  messages: { defaultAuthorization: 'Allow', rules: [] },
  groups: { defaultAuthorization: 'Allow', rules: [] },
});

/** Sentinel names that identify an interface rather than a declared sentinel. */
export const reservedSentinelNames = ['Consumer', 'Management'];

/** `appSettings` keys of a Constellation file that have a meaning here. */
export interface AppSettings {
  /** `DelayAfterAuthentificationError` (ms): the delay before a refused authentication is answered. */
  delayAfterAuthenticationErrorMs?: number;
}

/** What reading a file gives: the configuration, plus what the file says outside of it. */
export interface ConfigurationFile {
  config: HubConfiguration;
  appSettings: AppSettings;
  /** Parts of the file the hub does not use, each named once (reported at start, never silently). */
  ignored: string[];
}
