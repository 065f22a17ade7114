/**
 * The configuration document as a plain shape for zod (xmlShape.ts): what each element may hold
 * (attributes, child elements, repeated ones as arrays, raw content), with every attribute and element
 * the hub does not use named in `ignored`, and paths for naming the element at fault.
 */
import type { XmlElement } from '@rgrove/parse-xml';
import { elements, innerText } from './xmlDocument.js';

/** What each element may hold: attributes, child elements (repeated ones as arrays), raw content. */
interface ElementSpec {
  attributes?: readonly string[];
  /** Other spellings of an attribute, mapped onto its name (Constellation's own typo). */
  aliases?: Readonly<Record<string, string>>;
  children?: Readonly<Record<string, ElementSpec>>;
  repeated?: boolean;
  /** The element's inner text is the value, as written (setting contents: JSON text or an XML document). */
  raw?: boolean;
}

const recoverySpec: ElementSpec = {
  attributes: ['restartAfterFailure', 'numberOfRetry', 'resetCounterAfterMinutes', 'restartPackageAfterSeconds'],
  aliases: { restCounterAfterMinutes: 'resetCounterAfterMinutes' },
};
const ruleSetSpec = (fields: string[]): ElementSpec => ({
  attributes: ['defaultAuthorization'],
  children: { authorization: { repeated: true, attributes: ['id', 'authorization', ...fields] } },
});
const settingsSpec: ElementSpec = {
  children: {
    setting: { repeated: true, attributes: ['key', 'value'], children: { content: { raw: true } } },
    import: { repeated: true, children: { settingGroup: { repeated: true, attributes: ['groupName'] } } },
  },
};
const hubSpec: ElementSpec = {
  children: {
    listenUris: { children: { uri: { repeated: true, attributes: ['listenUri'] } } },
    recoveryOptions: recoverySpec,
    credentials: {
      children: {
        credential: {
          repeated: true,
          attributes: [
            'name',
            'accessKey',
            'enable',
            'enableControlHub',
            'enableManagementAPI',
            'enableDeveloperAccess',
          ],
          children: {
            authorizations: {
              children: {
                stateObjects: ruleSetSpec(['sentinelName', 'packageName', 'name']),
                messages: ruleSetSpec(['scope', 'args', 'messageKey']),
                groups: ruleSetSpec(['groupName']),
              },
            },
          },
        },
      },
    },
    sentinels: {
      children: {
        sentinel: {
          repeated: true,
          attributes: ['name', 'credential'],
          children: {
            packages: {
              children: {
                package: {
                  repeated: true,
                  attributes: ['name', 'enable', 'filename', 'credential', 'autostart'],
                  children: {
                    settings: settingsSpec,
                    groups: { children: { group: { repeated: true, attributes: ['name'] } } },
                    recoveryOptions: recoverySpec,
                  },
                },
              },
            },
          },
        },
      },
    },
    settingsGroups: {
      children: { group: { repeated: true, attributes: ['name'], children: { settings: settingsSpec } } },
    },
  },
};

export type Shape = Record<string, unknown>;

const where = (path: string, element: XmlElement) => {
  const name = element.attributes.name ?? element.attributes.key;
  return `${path ? `${path}/` : ''}<${element.name}${name !== undefined ? ` ${element.attributes.name !== undefined ? 'name' : 'key'}="${name}"` : ''}>`;
};

/** Namespace declarations say how the file was written, not what it configures. */
const isDeclaration = (attribute: string) =>
  attribute === 'xmlns' || attribute.startsWith('xmlns:') || attribute.startsWith('xsi:');

function toShape(text: string, element: XmlElement, spec: ElementSpec, path: string, ignored: string[]): Shape {
  const shape: Shape = {};
  const here = where(path, element);
  for (const [name, value] of Object.entries(element.attributes)) {
    const canonical = spec.aliases?.[name] ?? name;
    if (spec.attributes?.includes(canonical)) {
      // The canonical spelling wins when a file has both.
      if (canonical === name || !(`@_${canonical}` in shape)) shape[`@_${canonical}`] = value;
    } else if (!isDeclaration(name)) ignored.push(`attribute "${name}" of ${here}`);
  }
  for (const node of elements(element)) {
    const childSpec = spec.children?.[node.name];
    if (!childSpec) {
      ignored.push(`${here}/<${node.name}>`);
      continue;
    }
    const value = childSpec.raw ? innerText(text, node) : toShape(text, node, childSpec, here, ignored);
    if (childSpec.repeated) ((shape[node.name] ??= []) as unknown[]).push(value);
    else if (!(node.name in shape)) shape[node.name] = value;
    else ignored.push(`${here}/<${node.name}> (a second one)`);
  }
  return shape;
}

/** A zod issue path as the file says it: `<credentials>/<credential>[2] attribute "name"`. */
export function describePath(path: PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part + 1}]`;
    else if (String(part).startsWith('@_')) out += ` attribute "${String(part).slice(2)}"`;
    else out += `${out ? '/' : ''}<${String(part)}>`;
  }
  return out || '<hub>';
}

/** The hub's element (`<hub>` or Constellation's) as a shape. */
export const hubShape = (text: string, root: XmlElement, ignored: string[]): Shape =>
  toShape(text, root, hubSpec, '', ignored);
