/**
 * The XML configuration file: text ⇄ HubConfiguration. Parsing validates the shape (zod, naming the
 * element and attribute at fault) and the cross-element rules; serializing round-trips what parsing reads.
 */
import { XMLBuilder, XMLParser, XMLValidator } from 'fast-xml-parser';
import type { z } from 'zod';
import type {
  CredentialAuthorizations,
  HubConfiguration,
  RecoveryOptions,
  Setting,
} from './model.js';
import { defaultRecoveryOptions } from './model.js';
import { ConfigurationError, validateConfiguration } from './validate.js';
import type { RecoveryOptionsXml, SettingsXml } from './xmlShape.js';
import { configurationXml, repeatedElements } from './xmlShape.js';

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  parseAttributeValue: false,
  parseTagValue: false,
  trimValues: true,
  // Setting contents are JSON text or a whole XML document: keep them as the text they are.
  stopNodes: ['*.content'],
  isArray: (tagName) => repeatedElements.has(tagName),
});

const builder = new XMLBuilder({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  format: true,
  suppressEmptyNode: true,
  suppressBooleanAttributes: false,
  stopNodes: ['*.content'],
});

type Tree = Record<string, unknown>;

/** Accepts `<hub>`, `<constellation>` or `<configuration><constellation>` so existing files migrate. */
function rootOf(document: Tree): Tree {
  const pick = (v: unknown): Tree => (v === '' || v == null ? {} : (v as Tree));
  if ('hub' in document) return pick(document.hub);
  if ('constellation' in document) return pick(document.constellation);
  if ('configuration' in document) {
    const inner = pick(document.configuration);
    if ('constellation' in inner) return pick(inner.constellation);
  }
  throw new ConfigurationError('the root element must be <hub> (or <constellation>)');
}

function describePath(path: PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part + 1}]`;
    else if (String(part).startsWith('@_')) out += ` attribute "${String(part).slice(2)}"`;
    else out += `${out ? '/' : ''}<${String(part)}>`;
  }
  return out || '<hub>';
}

const entities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return Number.isFinite(code) ? String.fromCodePoint(code) : whole;
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

function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const isXmlContent = (text: string) => text.trimStart().startsWith('<');

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

function authorizationsFrom(xml: AuthorizationsXml): CredentialAuthorizations {
  const so = xml?.stateObjects;
  const msg = xml?.messages;
  const grp = xml?.groups;
  return {
    stateObjects: {
      defaultAuthorization: so?.['@_defaultAuthorization'] ?? 'Allow',
      rules: (so?.authorization ?? []).map((r, i) => ({
        id: r['@_id'] || i + 1,
        authorization: r['@_authorization'],
        sentinelName: r['@_sentinelName'],
        packageName: r['@_packageName'],
        name: r['@_name'],
      })),
    },
    messages: {
      defaultAuthorization: msg?.['@_defaultAuthorization'] ?? 'Allow',
      rules: (msg?.authorization ?? []).map((r, i) => ({
        id: r['@_id'] || i + 1,
        authorization: r['@_authorization'],
        scope: r['@_scope'],
        args: r['@_args'],
        messageKey: r['@_messageKey'],
      })),
    },
    groups: {
      defaultAuthorization: grp?.['@_defaultAuthorization'] ?? 'Allow',
      rules: (grp?.authorization ?? []).map((r, i) => ({
        id: r['@_id'] || i + 1,
        authorization: r['@_authorization'],
        groupName: r['@_groupName'],
      })),
    },
  };
}

/** Parses and validates the configuration file's text; throws ConfigurationError naming the fault. */
export function parseConfiguration(text: string): HubConfiguration {
  const wellFormed = XMLValidator.validate(text);
  if (wellFormed !== true) {
    const { msg, line, col } = wellFormed.err;
    throw new ConfigurationError(`not well-formed XML at line ${line}, column ${col}: ${msg}`);
  }
  const root = rootOf(parser.parse(text) as Tree);
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
  return config;
}

const recoveryXml = (r: RecoveryOptions) => ({
  '@_restartAfterFailure': String(r.restartAfterFailure),
  '@_numberOfRetry': String(r.numberOfRetry),
  '@_resetCounterAfterMinutes': String(r.resetCounterAfterMinutes),
  '@_restartPackageAfterSeconds': String(r.restartPackageAfterSeconds),
});

const settingXml = (s: Setting) =>
  s.kind === 'content'
    ? { '@_key': s.key, content: isXmlContent(s.value) ? s.value.trim() : escapeText(s.value) }
    : { '@_key': s.key, '@_value': s.value };

const authorizationsXml = (a: CredentialAuthorizations) => ({
  stateObjects: {
    '@_defaultAuthorization': a.stateObjects.defaultAuthorization,
    authorization: a.stateObjects.rules.map((r) => ({
      '@_id': String(r.id),
      '@_authorization': r.authorization,
      '@_sentinelName': r.sentinelName,
      '@_packageName': r.packageName,
      '@_name': r.name,
    })),
  },
  messages: {
    '@_defaultAuthorization': a.messages.defaultAuthorization,
    authorization: a.messages.rules.map((r) => ({
      '@_id': String(r.id),
      '@_authorization': r.authorization,
      '@_scope': r.scope,
      '@_args': r.args,
      '@_messageKey': r.messageKey,
    })),
  },
  groups: {
    '@_defaultAuthorization': a.groups.defaultAuthorization,
    authorization: a.groups.rules.map((r) => ({
      '@_id': String(r.id),
      '@_authorization': r.authorization,
      '@_groupName': r.groupName,
    })),
  },
});

/** Serializes the configuration as the XML file the hub reads (parse ∘ serialize is the identity). */
export function serializeConfiguration(config: HubConfiguration): string {
  const hub = {
    listenUris: { uri: config.listenUris.map((u) => ({ '@_listenUri': u })) },
    recoveryOptions: recoveryXml(config.recoveryOptions),
    credentials: {
      credential: config.credentials.map((c) => ({
        '@_name': c.name,
        '@_accessKey': c.accessKey,
        '@_enable': String(c.enable),
        '@_enableControlHub': String(c.enableControlHub),
        '@_enableManagementAPI': String(c.enableManagementAPI),
        '@_enableDeveloperAccess': String(c.enableDeveloperAccess),
        authorizations: authorizationsXml(c.authorizations),
      })),
    },
    sentinels: {
      sentinel: config.sentinels.map((s) => ({
        '@_name': s.name,
        '@_credential': s.credential,
        packages: {
          package: s.packages.map((p) => ({
            '@_name': p.name,
            '@_enable': String(p.enable),
            ...(p.packageFile !== undefined ? { '@_filename': p.packageFile } : {}),
            ...(p.credential !== undefined ? { '@_credential': p.credential } : {}),
            '@_autostart': String(p.autoStart),
            ...(p.settings.length || p.imports.length
              ? {
                  settings: {
                    setting: p.settings.map(settingXml),
                    ...(p.imports.length ? { import: [{ settingGroup: p.imports.map((g) => ({ '@_groupName': g })) }] } : {}),
                  },
                }
              : {}),
            ...(p.groups.length ? { groups: { group: p.groups.map((g) => ({ '@_name': g })) } } : {}),
            ...(p.recoveryOptions ? { recoveryOptions: recoveryXml(p.recoveryOptions) } : {}),
          })),
        },
      })),
    },
    settingsGroups: {
      group: config.settingsGroups.map((g) => ({
        '@_name': g.name,
        settings: { setting: g.settings.map(settingXml) },
      })),
    },
  };
  return `<?xml version="1.0" encoding="utf-8"?>\n${builder.build({ hub }) as string}`;
}
