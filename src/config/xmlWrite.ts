/**
 * XML text for configuration elements: the whole file on a first start, and single elements that a
 * management write inserts or replaces (xmlEdit.ts). Escaping keeps every value exactly: tabs, line
 * breaks and carriage returns in attributes are written as character references, because an XML reader
 * turns literal ones into spaces.
 */
import type {
  Credential,
  HubConfiguration,
  PackageInstance,
  RecoveryOptions,
  RuleSet,
  Sentinel,
  Setting,
  SettingsGroup,
} from './model.js';

export function escapeAttribute(value: string): string {
  return value.replace(
    /[&<>"\t\n\r]/g,
    (c) =>
      ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\t': '&#9;', '\n': '&#10;', '\r': '&#13;' })[
        c
      ] as string,
  );
}

export function escapeText(value: string): string {
  return value.replace(/[&<>\r]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '\r': '&#13;' })[c] as string);
}

/** An element in memory: attributes in order (undefined ones are left out), children or raw inner text. */
export interface XmlNodeSpec {
  name: string;
  attributes: [string, string | undefined][];
  children?: XmlNodeSpec[];
  /** Inner text written as is (already escaped). */
  inner?: string;
}

/** XML text of `node`; nested lines are indented by `step` relative to the node's own line. */
export function render(node: XmlNodeSpec, step = '  '): string {
  const attributes = node.attributes
    .filter((a): a is [string, string] => a[1] !== undefined)
    .map(([name, value]) => ` ${name}="${escapeAttribute(value)}"`)
    .join('');
  const open = `<${node.name}${attributes}`;
  if (node.inner !== undefined) return `${open}>${node.inner}</${node.name}>`;
  if (!node.children?.length) return `${open}/>`;
  const inner = node.children.map((c) => `\n${step}${render(c, step).replace(/\n/g, `\n${step}`)}`).join('');
  return `${open}>${inner}\n</${node.name}>`;
}

export const recoveryNode = (r: RecoveryOptions): XmlNodeSpec => ({
  name: 'recoveryOptions',
  attributes: recoveryAttributes(r),
});

export const recoveryAttributes = (r: RecoveryOptions): [string, string][] => [
  ['restartAfterFailure', String(r.restartAfterFailure)],
  ['numberOfRetry', String(r.numberOfRetry)],
  ['resetCounterAfterMinutes', String(r.resetCounterAfterMinutes)],
  ['restartPackageAfterSeconds', String(r.restartPackageAfterSeconds)],
];

const isXmlContent = (text: string) => text.trimStart().startsWith('<');

export const settingNode = (s: Setting): XmlNodeSpec =>
  s.kind === 'content'
    ? {
        name: 'setting',
        attributes: [['key', s.key]],
        children: [
          { name: 'content', attributes: [], inner: isXmlContent(s.value) ? s.value.trim() : escapeText(s.value) },
        ],
      }
    : {
        name: 'setting',
        attributes: [
          ['key', s.key],
          ['value', s.value],
        ],
      };

export const importNode = (imports: string[]): XmlNodeSpec => ({
  name: 'import',
  attributes: [],
  children: imports.map((g) => ({ name: 'settingGroup', attributes: [['groupName', g]] })),
});

export const ruleSetNode = (
  name: 'stateObjects' | 'messages' | 'groups',
  set: RuleSet<{ id: string } & Record<string, string>>,
  fields: string[],
): XmlNodeSpec => ({
  name,
  attributes: [['defaultAuthorization', set.defaultAuthorization]],
  children: set.rules.map((r) => ({
    name: 'authorization',
    attributes: [['id', r.id], ['authorization', r.authorization], ...fields.map((f): [string, string] => [f, r[f]])],
  })),
});

export const stateObjectFields = ['sentinelName', 'packageName', 'name'];
export const messageFields = ['scope', 'args', 'messageKey'];
export const groupFields = ['groupName'];

export function ruleSetNodes(c: Credential): { stateObjects: XmlNodeSpec; messages: XmlNodeSpec; groups: XmlNodeSpec } {
  const a = c.authorizations as unknown as Record<
    'stateObjects' | 'messages' | 'groups',
    RuleSet<{ id: string } & Record<string, string>>
  >;
  return {
    stateObjects: ruleSetNode('stateObjects', a.stateObjects, stateObjectFields),
    messages: ruleSetNode('messages', a.messages, messageFields),
    groups: ruleSetNode('groups', a.groups, groupFields),
  };
}

export const credentialAttributes = (c: Credential): [string, string][] => [
  ['name', c.name],
  ['accessKey', c.accessKey],
  ['enable', String(c.enable)],
  ['enableControlHub', String(c.enableControlHub)],
  ['enableManagementAPI', String(c.enableManagementAPI)],
  ['enableDeveloperAccess', String(c.enableDeveloperAccess)],
];

/** A rule set that allows everything is what an absent element means: it is not written. */
const isOpen = (set: RuleSet<unknown>) => set.defaultAuthorization === 'Allow' && set.rules.length === 0;

export function authorizationsNode(c: Credential): XmlNodeSpec | undefined {
  const sets = ruleSetNodes(c);
  const written = (['stateObjects', 'messages', 'groups'] as const)
    .filter((k) => !isOpen(c.authorizations[k]))
    .map((k) => sets[k]);
  return written.length ? { name: 'authorizations', attributes: [], children: written } : undefined;
}

export function credentialNode(c: Credential): XmlNodeSpec {
  const authorizations = authorizationsNode(c);
  return { name: 'credential', attributes: credentialAttributes(c), children: authorizations ? [authorizations] : [] };
}

export const packageAttributes = (p: PackageInstance): [string, string | undefined][] => [
  ['name', p.name],
  ['enable', String(p.enable)],
  ['filename', p.packageFile],
  ['credential', p.credential],
  ['autostart', String(p.autoStart)],
];

export const settingsNode = (settings: Setting[], imports: string[]): XmlNodeSpec => ({
  name: 'settings',
  attributes: [],
  children: [...settings.map(settingNode), ...(imports.length ? [importNode(imports)] : [])],
});

export const groupsNode = (groups: string[]): XmlNodeSpec => ({
  name: 'groups',
  attributes: [],
  children: groups.map((g) => ({ name: 'group', attributes: [['name', g]] })),
});

export const packageNode = (p: PackageInstance): XmlNodeSpec => ({
  name: 'package',
  attributes: packageAttributes(p),
  children: [
    ...(p.settings.length || p.imports.length ? [settingsNode(p.settings, p.imports)] : []),
    ...(p.groups.length ? [groupsNode(p.groups)] : []),
    ...(p.recoveryOptions ? [recoveryNode(p.recoveryOptions)] : []),
  ],
});

export const sentinelNode = (s: Sentinel): XmlNodeSpec => ({
  name: 'sentinel',
  attributes: [
    ['name', s.name],
    ['credential', s.credential],
  ],
  children: [{ name: 'packages', attributes: [], children: s.packages.map(packageNode) }],
});

export const settingsGroupNode = (g: SettingsGroup): XmlNodeSpec => ({
  name: 'group',
  attributes: [['name', g.name]],
  children: [settingsNode(g.settings, [])],
});

export const listenUrisNode = (uris: string[]): XmlNodeSpec => ({
  name: 'listenUris',
  attributes: [],
  children: uris.map((u) => ({ name: 'uri', attributes: [['listenUri', u]] })),
});

/** The whole file, as a first start writes it (later writes edit the file in place instead). */
export function serializeConfiguration(config: HubConfiguration): string {
  const hub: XmlNodeSpec = {
    name: 'hub',
    attributes: [],
    children: [
      listenUrisNode(config.listenUris),
      recoveryNode(config.recoveryOptions),
      { name: 'credentials', attributes: [], children: config.credentials.map(credentialNode) },
      { name: 'sentinels', attributes: [], children: config.sentinels.map(sentinelNode) },
      { name: 'settingsGroups', attributes: [], children: config.settingsGroups.map(settingsGroupNode) },
    ],
  };
  return `<?xml version="1.0" encoding="utf-8"?>\n${render(hub)}\n`;
}
