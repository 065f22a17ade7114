/**
 * Rules across the whole configuration that no single element can check: unique names, references
 * that resolve, reserved names. Used for the file at start-up and reload, and for every management write.
 */
import type { HubConfiguration } from './model.js';
import { reservedSentinelNames } from './model.js';
import { nameProblem } from './names.js';

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
  const checkName = (where: string, name: string) => {
    const problem = nameProblem(name);
    if (problem) fail(`${where} attribute "name" ("${name}") ${problem}`);
  };

  const credentialNames = new Set(config.credentials.map((c) => c.name));
  config.credentials.forEach((c) => checkName(`<credentials>/<credential name="${c.name}">`, c.name));
  const dupCredential = firstDuplicate(config.credentials.map((c) => c.name));
  if (dupCredential) fail(`<credentials>/<credential> attribute "name": "${dupCredential}" is declared twice`);
  const dupKey = firstDuplicate(config.credentials.map((c) => c.accessKey));
  if (dupKey !== undefined) {
    const owners = config.credentials.filter((c) => c.accessKey === dupKey).map((c) => c.name);
    fail(`<credentials>/<credential> attribute "accessKey": credentials ${owners.map((o) => `"${o}"`).join(' and ')} share one access key`);
  }

  const groupNames = new Set(config.settingsGroups.map((g) => g.name));
  const dupGroup = firstDuplicate(config.settingsGroups.map((g) => g.name));
  if (dupGroup) fail(`<settingsGroups>/<group> attribute "name": "${dupGroup}" is declared twice`);
  for (const group of config.settingsGroups) {
    const where = `<settingsGroups>/<group name="${group.name}">`;
    checkName(where, group.name);
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
