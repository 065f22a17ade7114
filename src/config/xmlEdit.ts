/**
 * A management write edits the configuration file; it never regenerates it. Given the document, the
 * configuration it gave (`before`) and the one wanted (`after`), only the elements whose values changed
 * are touched (xmlTextEditor.ts); comments, unknown elements and attributes, the `<configuration>`
 * wrapper, the declaration and the layout of everything else stay byte for byte.
 */
import { isDeepStrictEqual } from 'node:util';
import type { XmlElement } from '@rgrove/parse-xml';
import type {
  Credential,
  HubConfiguration,
  PackageInstance,
  RecoveryOptions,
  Sentinel,
  Setting,
  SettingsGroup,
} from './model.js';
import type { ConfigurationDocument } from './xmlDocument.js';
import { child, elements } from './xmlDocument.js';
import type { AttributeChange } from './xmlTextEditor.js';
import { TextEditor } from './xmlTextEditor.js';
import type { XmlNodeSpec } from './xmlWrite.js';
import {
  authorizationsNode,
  credentialAttributes,
  credentialNode,
  groupsNode,
  importNode,
  listenUrisNode,
  packageAttributes,
  packageNode,
  recoveryAttributes,
  recoveryNode,
  ruleSetNodes,
  sentinelNode,
  settingNode,
  settingsGroupNode,
  settingsNode,
} from './xmlWrite.js';

const changed = (a: unknown, b: unknown) => !isDeepStrictEqual(a, b);

/**
 * Reconciles the children named `itemName` of `container` (keyed by `keyAttribute`) from `before` to
 * `after`: unchanged items are not touched, changed ones are edited, new ones appended, gone ones cut.
 */
function reconcileList<T>(
  editor: TextEditor,
  container: XmlElement,
  itemName: string,
  keyAttribute: string,
  keyOf: (item: T) => string,
  before: T[],
  after: T[],
  edit: (element: XmlElement, was: T, is: T) => void,
  node: (item: T) => XmlNodeSpec,
): void {
  const written = new Map<string, XmlElement>();
  for (const e of elements(container)) {
    const key = e.attributes[keyAttribute];
    if (e.name === itemName && key !== undefined && !written.has(key)) written.set(key, e);
  }
  const wasByKey = new Map(before.map((b) => [keyOf(b), b]));
  const added: XmlNodeSpec[] = [];
  for (const item of after) {
    const was = wasByKey.get(keyOf(item));
    const element = written.get(keyOf(item));
    if (was !== undefined && element) {
      if (changed(was, item)) edit(element, was, item);
    } else if (element) {
      editor.replace(element, node(item));
    } else added.push(node(item));
  }
  editor.append(container, added);
  const kept = new Set(after.map(keyOf));
  for (const [key, element] of written) if (!kept.has(key)) editor.remove(element);
}

/** `parent`'s child named `name`, or undefined after appending `whole` to `parent` when it has none. */
function ensure(
  editor: TextEditor,
  parent: XmlElement,
  name: string,
  whole: () => XmlNodeSpec,
): XmlElement | undefined {
  const found = child(parent, name);
  if (!found) editor.append(parent, [whole()]);
  return found;
}

const recoveryChanges = (r: RecoveryOptions): AttributeChange[] =>
  recoveryAttributes(r).map(([name, value]) => [
    name === 'resetCounterAfterMinutes' ? [name, 'restCounterAfterMinutes'] : [name],
    value,
  ]);

function editRecovery(
  editor: TextEditor,
  parent: XmlElement,
  was: RecoveryOptions | undefined,
  is: RecoveryOptions | undefined,
): void {
  if (!changed(was, is)) return;
  const element = child(parent, 'recoveryOptions');
  if (!is) {
    if (element) editor.remove(element);
  } else if (element) editor.setAttributes(element, recoveryChanges(is));
  else editor.append(parent, [recoveryNode(is)]);
}

function editSettings(
  editor: TextEditor,
  owner: XmlElement,
  was: { settings: Setting[]; imports: string[] },
  is: { settings: Setting[]; imports: string[] },
): void {
  if (!changed(was, is)) return;
  const settings = ensure(editor, owner, 'settings', () => settingsNode(is.settings, is.imports));
  if (!settings) return;
  const editSetting = (e: XmlElement, w: Setting, s: Setting) => {
    // A simple value changes in place; a change of kind or of content rewrites the setting.
    if (w.kind === 'value' && s.kind === 'value' && child(e, 'content') === undefined)
      editor.setAttributes(e, [[['value'], s.value]]);
    else editor.replace(e, settingNode(s));
  };
  reconcileList<Setting>(
    editor,
    settings,
    'setting',
    'key',
    (s) => s.key,
    was.settings,
    is.settings,
    editSetting,
    settingNode,
  );
  if (changed(was.imports, is.imports)) {
    const imports = elements(settings).filter((e) => e.name === 'import');
    imports.forEach((e) => editor.remove(e));
    if (is.imports.length) editor.append(settings, [importNode(is.imports)]);
  }
}

function editCredential(editor: TextEditor, element: XmlElement, was: Credential, is: Credential): void {
  const defaults: Record<string, string> = {
    enable: 'true',
    enableControlHub: 'false',
    enableManagementAPI: 'false',
    enableDeveloperAccess: 'false',
  };
  editor.setAttributes(
    element,
    credentialAttributes(is).map(([name, value]) => [[name], value, defaults[name]]),
  );
  if (!changed(was.authorizations, is.authorizations)) return;
  const sets = ruleSetNodes(is);
  const authorizations = child(element, 'authorizations');
  if (!authorizations) {
    const whole = authorizationsNode(is);
    if (whole) editor.append(element, [whole]);
    return;
  }
  for (const set of ['stateObjects', 'messages', 'groups'] as const) {
    if (!changed(was.authorizations[set], is.authorizations[set])) continue;
    // Rules are tried in document order: a changed set is written as a whole.
    const written = child(authorizations, set);
    if (written) editor.replace(written, sets[set]);
    else editor.append(authorizations, [sets[set]]);
  }
}

function editPackage(editor: TextEditor, element: XmlElement, was: PackageInstance, is: PackageInstance): void {
  const defaults: Record<string, string> = { enable: 'true', autostart: 'true' };
  editor.setAttributes(
    element,
    packageAttributes(is).map(([name, value]) => [[name], value, defaults[name]]),
  );
  editSettings(
    editor,
    element,
    { settings: was.settings, imports: was.imports },
    { settings: is.settings, imports: is.imports },
  );
  if (changed(was.groups, is.groups)) {
    const groups = child(element, 'groups');
    if (groups && is.groups.length) editor.replace(groups, groupsNode(is.groups));
    else if (groups) editor.remove(groups);
    else if (is.groups.length) editor.append(element, [groupsNode(is.groups)]);
  }
  editRecovery(editor, element, was.recoveryOptions, is.recoveryOptions);
}

function editSentinel(editor: TextEditor, element: XmlElement, was: Sentinel, is: Sentinel): void {
  editor.setAttributes(element, [
    [['name'], is.name],
    [['credential'], is.credential],
  ]);
  if (!changed(was.packages, is.packages)) return;
  const packages = ensure(editor, element, 'packages', () => ({
    name: 'packages',
    attributes: [],
    children: is.packages.map(packageNode),
  }));
  if (packages)
    reconcileList<PackageInstance>(
      editor,
      packages,
      'package',
      'name',
      (p) => p.name,
      was.packages,
      is.packages,
      (e, w, p) => editPackage(editor, e, w, p),
      packageNode,
    );
}

function editGroup(editor: TextEditor, element: XmlElement, was: SettingsGroup, is: SettingsGroup): void {
  editSettings(editor, element, { settings: was.settings, imports: [] }, { settings: is.settings, imports: [] });
}

/** A section of the root holding a keyed list: reconciled when it changed, created when missing. */
function editSection<T>(
  editor: TextEditor,
  root: XmlElement,
  section: string,
  item: string,
  keyOf: (t: T) => string,
  was: T[],
  is: T[],
  edit: (e: XmlElement, w: T, t: T) => void,
  node: (t: T) => XmlNodeSpec,
): void {
  if (!changed(was, is)) return;
  const container = ensure(editor, root, section, () => ({ name: section, attributes: [], children: is.map(node) }));
  if (container) reconcileList(editor, container, item, 'name', keyOf, was, is, edit, node);
}

/** The document's text after the change from `before` (what the text says) to `after`, edited in place. */
export function editDocument(doc: ConfigurationDocument, before: HubConfiguration, after: HubConfiguration): string {
  const editor = new TextEditor(doc);
  const root = doc.root;
  if (changed(before.listenUris, after.listenUris)) {
    const written = child(root, 'listenUris');
    if (written) editor.replace(written, listenUrisNode(after.listenUris));
    else editor.append(root, [listenUrisNode(after.listenUris)]);
  }
  editRecovery(editor, root, before.recoveryOptions, after.recoveryOptions);
  editSection<Credential>(
    editor,
    root,
    'credentials',
    'credential',
    (c) => c.name,
    before.credentials,
    after.credentials,
    (e, w, c) => editCredential(editor, e, w, c),
    credentialNode,
  );
  editSection<Sentinel>(
    editor,
    root,
    'sentinels',
    'sentinel',
    (s) => s.name,
    before.sentinels,
    after.sentinels,
    (e, w, s) => editSentinel(editor, e, w, s),
    sentinelNode,
  );
  editSection<SettingsGroup>(
    editor,
    root,
    'settingsGroups',
    'group',
    (g) => g.name,
    before.settingsGroups,
    after.settingsGroups,
    (e, w, g) => editGroup(editor, e, w, g),
    settingsGroupNode,
  );
  return editor.result();
}
