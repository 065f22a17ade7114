/**
 * Rules across the whole configuration that no single element can check: unique names, references
 * that resolve, reserved names. Used for the file at start-up and reload, and for every management write.
 */
import { parseListenUri } from '../listen.js';
import type { HubConfiguration, RuleSet, Setting } from './model.js';
import { reservedSentinelNames } from './model.js';
import { keyProblem, nameProblem, textProblem } from './names.js';

export class ConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigurationError';
  }
}

function firstDuplicate(values: string[]): string | undefined {
  const seen = new Set<string>();
  for (const v of values) {
    if (seen.has(v)) return v;
    seen.add(v);
  }
  return undefined;
}

export function validateConfiguration(config: HubConfiguration): void {
  const fail = (message: string): never => {
    throw new ConfigurationError(message);
  };
  const checkName = (where: string, name: string, attribute = 'name') => {
    const problem = nameProblem(name);
    if (problem) fail(`${where} attribute "${attribute}" (${JSON.stringify(name)}) ${problem}`);
  };
  const checkKey = (where: string, attribute: string, key: string) => {
    const problem = keyProblem(key);
    if (problem) fail(`${where} attribute "${attribute}" (${JSON.stringify(key)}) ${problem}`);
  };
  const checkText = (where: string, attribute: string, text: string) => {
    const problem = textProblem(text);
    if (problem) fail(`${where} ${attribute} ${problem}`);
  };
  const checkSettings = (where: string, settings: Setting[]) => {
    for (const s of settings) {
      checkKey(`${where}/<settings>/<setting>`, 'key', s.key);
      checkText(
        `${where}/<settings>/<setting key="${s.key}">`,
        s.kind === 'content' ? '<content>' : 'attribute "value"',
        s.value,
      );
    }
  };
  const checkRules = (where: string, set: RuleSet<{ id: string } & object>) => {
    for (const rule of set.rules) {
      checkKey(`${where}/<authorization>`, 'id', rule.id);
      for (const [field, value] of Object.entries(rule)) {
        if (field !== 'id' && field !== 'authorization' && typeof value === 'string')
          checkKey(`${where}/<authorization id="${rule.id}">`, field, value);
      }
    }
  };

  config.listenUris.forEach((uri) => {
    try {
      parseListenUri(uri);
    } catch (error) {
      fail(`<listenUris>/<uri> attribute "listenUri": ${(error as Error).message}`);
    }
  });

  const credentialNames = new Set(config.credentials.map((c) => c.name));
  for (const c of config.credentials) {
    const where = `<credentials>/<credential name="${c.name}">`;
    checkName(where, c.name);
    checkKey(where, 'accessKey', c.accessKey);
    checkRules(`${where}/<authorizations>/<stateObjects>`, c.authorizations.stateObjects);
    checkRules(`${where}/<authorizations>/<messages>`, c.authorizations.messages);
    checkRules(`${where}/<authorizations>/<groups>`, c.authorizations.groups);
  }
  const dupCredential = firstDuplicate(config.credentials.map((c) => c.name));
  if (dupCredential) fail(`<credentials>/<credential> attribute "name": "${dupCredential}" is declared twice`);
  const dupKey = firstDuplicate(config.credentials.map((c) => c.accessKey));
  if (dupKey !== undefined) {
    const owners = config.credentials.filter((c) => c.accessKey === dupKey).map((c) => c.name);
    fail(
      `<credentials>/<credential> attribute "accessKey": credentials ${owners.map((o) => `"${o}"`).join(' and ')} share one access key`,
    );
  }

  const groupNames = new Set(config.settingsGroups.map((g) => g.name));
  const dupGroup = firstDuplicate(config.settingsGroups.map((g) => g.name));
  if (dupGroup) fail(`<settingsGroups>/<group> attribute "name": "${dupGroup}" is declared twice`);
  for (const group of config.settingsGroups) {
    const where = `<settingsGroups>/<group name="${group.name}">`;
    checkName(where, group.name);
    checkSettings(where, group.settings);
    const dupSetting = firstDuplicate(group.settings.map((s) => s.key));
    if (dupSetting) fail(`${where}/<settings>/<setting> attribute "key": "${dupSetting}" is declared twice`);
  }

  const dupSentinel = firstDuplicate(config.sentinels.map((s) => s.name));
  if (dupSentinel) fail(`<sentinels>/<sentinel> attribute "name": "${dupSentinel}" is declared twice`);
  for (const sentinel of config.sentinels) {
    const where = `<sentinels>/<sentinel name="${sentinel.name}">`;
    checkName(where, sentinel.name);
    if (reservedSentinelNames.some((r) => r.toLowerCase() === sentinel.name.toLowerCase())) {
      fail(`${where} attribute "name": "${sentinel.name}" is reserved for an interface`);
    }
    if (!credentialNames.has(sentinel.credential)) {
      fail(`${where} attribute "credential": unknown credential "${sentinel.credential}"`);
    }
    const dupPackage = firstDuplicate(sentinel.packages.map((p) => p.name));
    if (dupPackage) fail(`${where}/<packages>/<package> attribute "name": "${dupPackage}" is declared twice`);
    for (const instance of sentinel.packages) {
      const at = `${where}/<packages>/<package name="${instance.name}">`;
      checkName(at, instance.name);
      if (instance.packageFile !== undefined) checkText(at, 'attribute "filename"', instance.packageFile);
      checkSettings(at, instance.settings);
      if (instance.credential !== undefined && !credentialNames.has(instance.credential)) {
        fail(`${at} attribute "credential": unknown credential "${instance.credential}"`);
      }
      const dupSetting = firstDuplicate(instance.settings.map((s) => s.key));
      if (dupSetting) fail(`${at}/<settings>/<setting> attribute "key": "${dupSetting}" is declared twice`);
      for (const imported of instance.imports) {
        if (!groupNames.has(imported)) {
          fail(`${at}/<settings>/<import>/<settingGroup> attribute "groupName": unknown settings group "${imported}"`);
        }
      }
      for (const group of instance.groups) {
        const problem = nameProblem(group);
        if (problem) fail(`${at}/<groups>/<group> attribute "name" ("${group}") ${problem}`);
      }
    }
  }
}

/** Why nobody could manage the hub with `config`, or undefined when someone can. */
export function managementAccessProblem(config: HubConfiguration): string | undefined {
  if (config.credentials.some((c) => c.enable && c.enableManagementAPI)) return undefined;
  return 'no enabled credential has the management right (enable="true" enableManagementAPI="true"): nobody could manage the hub';
}
