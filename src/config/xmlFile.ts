/**
 * Parsing the configuration file: text → document (xmlDocument.ts, hostile input refused) → a plain
 * shape (xmlToShape.ts) that zod validates (xmlShape.ts, naming the element and attribute at fault) →
 * HubConfiguration, checked by the rules across the whole configuration (validate.ts). Everything the
 * hub does not use is collected and named, so that a start can report it once.
 */
import type { z } from 'zod';
import type {
  AppSettings,
  ConfigurationFile,
  CredentialAuthorizations,
  HubConfiguration,
  RecoveryOptions,
  Setting,
} from './model.js';
import { defaultRecoveryOptions } from './model.js';
import { ConfigurationError, validateConfiguration } from './validate.js';
import type { ConfigurationDocument } from './xmlDocument.js';
import { elements, parseDocument } from './xmlDocument.js';
import type { RecoveryOptionsXml, SettingsXml } from './xmlShape.js';
import { configurationXml } from './xmlShape.js';
import { describePath, hubShape } from './xmlToShape.js';

export { serializeConfiguration } from './xmlWrite.js';

/** `appSettings` keys with a meaning here (the spelling is Constellation's). */
const honouredAppSettings = ['DelayAfterAuthentificationError'];

const entities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      // The parser already refused references to characters XML cannot hold.
      return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return entities[name.toLowerCase()] ?? whole;
  });
}

/** A content element's raw text: CDATA unwrapped, XML kept as is, JSON text unescaped. */
function contentText(raw: string): string {
  const text = raw.trim();
  const cdata = /^<!\[CDATA\[([\s\S]*)\]\]>$/.exec(text);
  if (cdata) return cdata[1];
  if (text.startsWith('<')) return text;
  return decodeEntities(text);
}

function settingsFrom(xml: SettingsXml | undefined): { settings: Setting[]; imports: string[] } {
  if (!xml) return { settings: [], imports: [] };
  const settings = xml.setting.map((s): Setting =>
    s.content !== undefined
      ? { key: s['@_key'], kind: 'content', value: contentText(s.content) }
      : { key: s['@_key'], kind: 'value', value: s['@_value'] ?? '' },
  );
  const imports = xml.import.flatMap((i) => i.settingGroup.map((g) => g['@_groupName']));
  return { settings, imports };
}

function recoveryFrom(xml: RecoveryOptionsXml): RecoveryOptions {
  return {
    restartAfterFailure: xml['@_restartAfterFailure'],
    numberOfRetry: xml['@_numberOfRetry'],
    resetCounterAfterMinutes: xml['@_resetCounterAfterMinutes'],
    restartPackageAfterSeconds: xml['@_restartPackageAfterSeconds'],
  };
}

type AuthorizationsXml = NonNullable<
  z.infer<typeof configurationXml>['credentials']
>['credential'][number]['authorizations'];

// A rule without an id gets its position, so that messages can still name it.
const ruleId = (id: string | undefined, index: number) => id ?? String(index + 1);

function authorizationsFrom(xml: AuthorizationsXml): CredentialAuthorizations {
  const so = xml?.stateObjects;
  const msg = xml?.messages;
  const grp = xml?.groups;
  return {
    stateObjects: {
      defaultAuthorization: so?.['@_defaultAuthorization'] ?? 'Allow',
      rules: (so?.authorization ?? []).map((r, i) => ({
        id: ruleId(r['@_id'], i),
        authorization: r['@_authorization'],
        sentinelName: r['@_sentinelName'],
        packageName: r['@_packageName'],
        name: r['@_name'],
      })),
    },
    messages: {
      defaultAuthorization: msg?.['@_defaultAuthorization'] ?? 'Allow',
      rules: (msg?.authorization ?? []).map((r, i) => ({
        id: ruleId(r['@_id'], i),
        authorization: r['@_authorization'],
        scope: r['@_scope'],
        args: r['@_args'],
        messageKey: r['@_messageKey'],
      })),
    },
    groups: {
      defaultAuthorization: grp?.['@_defaultAuthorization'] ?? 'Allow',
      rules: (grp?.authorization ?? []).map((r, i) => ({
        id: ruleId(r['@_id'], i),
        authorization: r['@_authorization'],
        groupName: r['@_groupName'],
      })),
    },
  };
}

/** `<configuration>`'s other children: `appSettings` keys with a meaning are read, the rest reported. */
function readWrapper(doc: ConfigurationDocument, ignored: string[]): AppSettings {
  const appSettings: AppSettings = {};
  if (!doc.wrapper) return appSettings;
  for (const node of elements(doc.wrapper)) {
    if (node === doc.root) continue;
    if (node.name !== 'appSettings') {
      ignored.push(`<configuration>/<${node.name}>`);
      continue;
    }
    for (const add of elements(node)) {
      const key = add.attributes.key;
      if (add.name !== 'add' || key === undefined || !honouredAppSettings.includes(key)) {
        ignored.push(`<appSettings>/<${add.name}${key !== undefined ? ` key="${key}"` : ''}>`);
        continue;
      }
      const value = add.attributes.value ?? '';
      if (!/^\s*\d{1,7}\s*$/.test(value)) {
        throw new ConfigurationError(
          `<appSettings>/<add key="${key}"> attribute "value": expected a whole number of milliseconds, got "${value}"`,
        );
      }
      appSettings.delayAfterAuthenticationErrorMs = Number(value);
    }
  }
  return appSettings;
}

/** Reads an already parsed document; throws ConfigurationError naming the fault. */
export function parseConfigurationDocument(doc: ConfigurationDocument): ConfigurationFile {
  const ignored: string[] = [];
  const appSettings = readWrapper(doc, ignored);
  const root = hubShape(doc.text, doc.root, ignored);
  const shaped = configurationXml.safeParse(root);
  if (!shaped.success) {
    const issue = shaped.error.issues[0];
    throw new ConfigurationError(`${describePath(issue.path)}: ${issue.message}`);
  }
  const xml = shaped.data;
  const config: HubConfiguration = {
    listenUris: (xml.listenUris?.uri ?? []).map((u) => u['@_listenUri']),
    recoveryOptions: xml.recoveryOptions ? recoveryFrom(xml.recoveryOptions) : { ...defaultRecoveryOptions },
    credentials: (xml.credentials?.credential ?? []).map((c) => ({
      name: c['@_name'],
      accessKey: c['@_accessKey'],
      enable: c['@_enable'],
      enableControlHub: c['@_enableControlHub'],
      enableManagementAPI: c['@_enableManagementAPI'],
      enableDeveloperAccess: c['@_enableDeveloperAccess'],
      authorizations: authorizationsFrom(c.authorizations),
    })),
    sentinels: (xml.sentinels?.sentinel ?? []).map((s) => ({
      name: s['@_name'],
      credential: s['@_credential'],
      packages: (s.packages?.package ?? []).map((p) => ({
        name: p['@_name'],
        enable: p['@_enable'],
        ...(p['@_filename'] ? { packageFile: p['@_filename'] } : {}),
        ...(p['@_credential'] ? { credential: p['@_credential'] } : {}),
        autoStart: p['@_autostart'],
        ...settingsFrom(p.settings),
        groups: (p.groups?.group ?? []).map((g) => g['@_name']),
        ...(p.recoveryOptions ? { recoveryOptions: recoveryFrom(p.recoveryOptions) } : {}),
      })),
    })),
    settingsGroups: (xml.settingsGroups?.group ?? []).map((g) => ({
      name: g['@_name'],
      settings: settingsFrom(g.settings).settings,
    })),
  };
  validateConfiguration(config);
  return { config, appSettings, ignored };
}

/** Parses and validates the configuration file's text, with what it says outside the configuration. */
export function parseConfigurationFile(text: string): ConfigurationFile {
  return parseConfigurationDocument(parseDocument(text));
}
