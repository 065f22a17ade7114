/**
 * The configuration file as an XML document with the offsets of every element in the text (what an
 * edit in place needs), parsed strictly by @rgrove/parse-xml, which resolves no DTD and no external
 * entity. Hostile input (too deep, prototype names, anything but plain well-formed XML) is refused here.
 */
import type { XmlDocument } from '@rgrove/parse-xml';
import { parseXml, XmlElement, XmlError } from '@rgrove/parse-xml';
import { ConfigurationError } from './validate.js';

/** Far deeper than any configuration file; deeper documents are refused before they exhaust the stack. */
const MAX_DEPTH = 100;
/** Names that would reach an object's prototype if some code ever used them as keys. */
const FORBIDDEN_NAMES = new Set(['__proto__', 'constructor', 'prototype']);
/** Names of the element holding the hub's configuration (the last two are Constellation's). */
export const HUB_ROOT_NAMES = ['hub', 'constellation', 'constellationSection'];

export interface ConfigurationDocument {
  text: string;
  document: XmlDocument;
  /** The element holding the configuration: `<hub>`, `<constellation>` or `<constellationSection>`. */
  root: XmlElement;
  /** `<configuration>` when the file is a .NET configuration file wrapping the root. */
  wrapper?: XmlElement;
}

/** Parses `text`; throws ConfigurationError naming the problem for anything not plain, well-formed XML. */
export function parseDocument(text: string): ConfigurationDocument {
  if (/<!DOCTYPE/i.test(text) || /<!ENTITY/i.test(text)) {
    throw new ConfigurationError(
      'document type declarations (<!DOCTYPE>, <!ENTITY>) are not accepted: the configuration file is plain XML without a DTD',
    );
  }
  let document: XmlDocument;
  try {
    document = parseXml(text, {
      includeOffsets: true,
      preserveComments: true,
      preserveXmlDeclaration: true,
      preserveCdata: true,
    });
  } catch (error) {
    if (error instanceof XmlError) {
      const message = error.message.split('\n')[0].replace(/ \(line \d+, column \d+\)$/, '');
      throw new ConfigurationError(`not well-formed XML at line ${error.line}, column ${error.column}: ${message}`);
    }
    // The parser descends recursively: a hostile file nested tens of thousands deep ends its stack.
    if (error instanceof RangeError) throw new ConfigurationError(`elements are nested more than ${MAX_DEPTH} deep`);
    throw error;
  }
  const top = document.root;
  if (!top) throw new ConfigurationError('the document has no root element');
  checkNamesAndDepth(top);
  if (HUB_ROOT_NAMES.includes(top.name)) return { text, document, root: top };
  if (top.name === 'configuration') {
    const inner = elements(top).find((e) => HUB_ROOT_NAMES.includes(e.name));
    if (inner) return { text, document, root: inner, wrapper: top };
    throw new ConfigurationError('<configuration> holds no <constellationSection>, <constellation> or <hub> element');
  }
  throw new ConfigurationError(
    `the root element must be <hub> (or <constellation>, or <configuration> wrapping <constellationSection>), not <${top.name}>`,
  );
}

/** Walks the tree without recursion: names that reach prototypes are refused, and so is deep nesting. */
function checkNamesAndDepth(top: XmlElement): void {
  const pending: [XmlElement, number][] = [[top, 1]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [element, depth] = next;
    if (depth > MAX_DEPTH) throw new ConfigurationError(`elements are nested more than ${MAX_DEPTH} deep`);
    if (FORBIDDEN_NAMES.has(element.name))
      throw new ConfigurationError(`an element may not be named <${element.name}>`);
    for (const name of Object.keys(element.attributes)) {
      if (FORBIDDEN_NAMES.has(name))
        throw new ConfigurationError(`<${element.name}>: an attribute may not be named "${name}"`);
    }
    for (const c of elements(element)) pending.push([c, depth + 1]);
  }
}

/** The element children of `element`, in document order. */
export const elements = (element: XmlElement): XmlElement[] =>
  element.children.filter((c): c is XmlElement => c instanceof XmlElement);

/** The first element child named `name`. */
export const child = (element: XmlElement, name: string): XmlElement | undefined =>
  element.children.find((c): c is XmlElement => c instanceof XmlElement && c.name === name);

/** Offset just past the `>` of `element`'s start tag. */
export function startTagEnd(text: string, element: XmlElement): number {
  let quote = '';
  for (let i = element.start + 1; i < element.end; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '>') return i + 1;
  }
  return element.end;
}

export const isSelfClosing = (text: string, element: XmlElement) =>
  startTagEnd(text, element) === element.end && text[element.end - 2] === '/';

/** Offset of the `</` of `element`'s end tag (its end for a self-closing element). */
export function endTagStart(text: string, element: XmlElement): number {
  if (isSelfClosing(text, element)) return element.end;
  return text.lastIndexOf('</', element.end - 1);
}

/** The text between the start and end tags of `element`, as written. */
export const innerText = (text: string, element: XmlElement) =>
  isSelfClosing(text, element) ? '' : text.slice(startTagEnd(text, element), endTagStart(text, element));
