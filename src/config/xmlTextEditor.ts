/**
 * Edits of one configuration document's text by offsets: attributes set in place (spelling, quotes and
 * neighbours kept), elements replaced, appended at their siblings' indentation, or cut out with their
 * line. Edits are gathered, then applied at once (result); they never overlap.
 */
import type { XmlElement } from '@rgrove/parse-xml';
import type { ConfigurationDocument } from './xmlDocument.js';
import { elements, endTagStart, isSelfClosing, startTagEnd } from './xmlDocument.js';
import type { XmlNodeSpec } from './xmlWrite.js';
import { escapeAttribute, render } from './xmlWrite.js';

interface Splice {
  start: number;
  end: number;
  text: string;
}

/** An attribute to set: its accepted spellings, the value (undefined: remove), the default when absent. */
export type AttributeChange = [spellings: string[], value: string | undefined, absentMeans?: string];

/** Two attribute values that mean the same (`True` and `true`, `007` and `7`) are left as written. */
function sameValue(written: string, wanted: string): boolean {
  if (written === wanted) return true;
  if (/^(true|false|allow|deny)$/i.test(wanted)) return written.trim().toLowerCase() === wanted.toLowerCase();
  if (/^\d+$/.test(wanted) && /^\s*\d+\s*$/.test(written)) return Number(written) === Number(wanted);
  return false;
}

export class TextEditor {
  private readonly splices: Splice[] = [];
  readonly step: string;
  /** The file's line ending: files from Windows (CRLF) stay CRLF. */
  private readonly eol: string;

  constructor(private readonly doc: ConfigurationDocument) {
    const first = elements(doc.root)[0];
    const step = first ? this.indentOf(first).slice(this.indentOf(doc.root).length) : '';
    this.step = step || '  ';
    this.eol = doc.text.includes('\r\n') ? '\r\n' : '\n';
  }

  get text(): string {
    return this.doc.text;
  }

  /** The white space that starts `element`'s line, when the element starts the line; else ''. */
  indentOf(element: XmlElement): string {
    const lineStart = this.text.lastIndexOf('\n', element.start - 1) + 1;
    const before = this.text.slice(lineStart, element.start);
    return /^[ \t]*$/.test(before) ? before : '';
  }

  private childIndent(parent: XmlElement): string {
    const first = elements(parent)[0];
    return first ? this.indentOf(first) : this.indentOf(parent) + this.step;
  }

  private splice(start: number, end: number, text: string): void {
    this.splices.push({ start, end, text });
  }

  /** Sets, replaces or removes attributes of `element`'s start tag, leaving the others as written. */
  setAttributes(element: XmlElement, changes: AttributeChange[]): void {
    const tagEnd = startTagEnd(this.text, element);
    const tag = this.text.slice(element.start, tagEnd);
    const written = [...tag.matchAll(/(\s+)([^\s=/>]+)\s*=\s*("([^"]*)"|'([^']*)')/g)].map((m) => ({
      name: m[2],
      start: element.start + (m.index as number),
      end: element.start + (m.index as number) + m[0].length,
      valueStart: element.start + (m.index as number) + m[0].length - m[3].length,
      quote: m[3][0],
    }));
    const insertAt = written.length ? written[written.length - 1].end : element.start + 1 + element.name.length;
    let inserted = '';
    for (const [spellings, value, absentMeans] of changes) {
      const found = written.find((w) => spellings.includes(w.name));
      if (found) {
        const current = element.attributes[found.name];
        if (value === undefined) this.splice(found.start, found.end, '');
        else if (!sameValue(current, value)) {
          const escaped =
            found.quote === "'"
              ? escapeAttribute(value)
                  .replace(/&quot;/g, '"')
                  .replace(/'/g, '&apos;')
              : escapeAttribute(value);
          this.splice(found.valueStart, found.end, `${found.quote}${escaped}${found.quote}`);
        }
      } else if (value !== undefined && !(absentMeans !== undefined && sameValue(absentMeans, value))) {
        inserted += ` ${spellings[0]}="${escapeAttribute(value)}"`;
      }
    }
    if (inserted) this.splice(insertAt, insertAt, inserted);
  }

  /** Cuts `element` out, with its line when it stands alone on it. */
  remove(element: XmlElement): void {
    const lineStart = this.text.lastIndexOf('\n', element.start - 1) + 1;
    const alone = /^[ \t]*$/.test(this.text.slice(lineStart, element.start));
    const rest = /^[ \t]*\r?\n/.exec(this.text.slice(element.end));
    if (alone && rest) this.splice(lineStart, element.end + rest[0].length, '');
    else this.splice(element.start, element.end, '');
  }

  /** Replaces `element` with `node`, at the element's indentation. */
  replace(element: XmlElement, node: XmlNodeSpec): void {
    this.splice(element.start, element.end, this.indented(node, this.indentOf(element)));
  }

  private indented(node: XmlNodeSpec, indent: string): string {
    return render(node, this.step).replace(/\n/g, `${this.eol}${indent}`);
  }

  private readonly appended = new Map<XmlElement, XmlNodeSpec[]>();

  /** Inserts `nodes` as the last children of `parent`, at the indentation of its children. */
  append(parent: XmlElement, nodes: XmlNodeSpec[]): void {
    if (!nodes.length) return;
    // Gathered per parent: a self-closing parent is opened once, whatever is added to it.
    this.appended.set(parent, [...(this.appended.get(parent) ?? []), ...nodes]);
  }

  private insertChildren(parent: XmlElement, nodes: XmlNodeSpec[]): void {
    const indent = this.indentOf(parent);
    const inner = this.childIndent(parent);
    const texts = nodes.map((n) => this.indented(n, inner));
    if (isSelfClosing(this.text, parent)) {
      // Only the `/>` is replaced, so that attribute edits of the same start tag do not overlap.
      this.splice(
        parent.end - 2,
        parent.end,
        `>${texts.map((t) => `${this.eol}${inner}${t}`).join('')}${this.eol}${indent}</${parent.name}>`,
      );
      return;
    }
    const closeAt = endTagStart(this.text, parent);
    const lineStart = this.text.lastIndexOf('\n', closeAt - 1) + 1;
    if (/^[ \t]*$/.test(this.text.slice(lineStart, closeAt)) && lineStart > startTagEnd(this.text, parent)) {
      this.splice(lineStart, lineStart, texts.map((t) => `${inner}${t}${this.eol}`).join(''));
    } else {
      this.splice(closeAt, closeAt, `${texts.map((t) => `${this.eol}${inner}${t}`).join('')}${this.eol}${indent}`);
    }
  }

  /** The text with every edit applied (edits never overlap: each concerns its own element). */
  result(): string {
    for (const [parent, nodes] of this.appended) this.insertChildren(parent, nodes);
    this.appended.clear();
    const ordered = [...this.splices].sort((a, b) => b.start - a.start || b.end - a.end);
    let out = this.text;
    let limit = Infinity;
    for (const s of ordered) {
      if (s.end > limit) throw new Error('configuration edit: overlapping changes');
      out = out.slice(0, s.start) + s.text + out.slice(s.end);
      limit = s.start;
    }
    return out;
  }
}
