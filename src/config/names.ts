/**
 * The one set of rules for the names, keys and values of the configuration. The XML reader, `POST
 * configuration` and every management endpoint check through these functions, so the same input is
 * refused everywhere or stored and read back identically: nothing is trimmed or folded on the way in
 * or out, and what XML 1.0 cannot carry is refused instead of written.
 */
import { z } from 'zod';

/** Names of sentinels, packages, credentials, groups and settings travel in URL paths and friendly names. */
const MAX_NAME_LENGTH = 128;
/** Setting keys, access keys, authorization patterns and rule ids. */
const MAX_KEY_LENGTH = 256;

/**
 * Characters XML 1.0 cannot carry at all (not even as a character reference): C0 controls other than
 * tab, line feed and carriage return, lone surrogates, U+FFFE and U+FFFF.
 */
// Without the u flag the surrogate classes see UTF-16 code units, which is what a lone surrogate is.
const NOT_IN_XML =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why `text` cannot be stored in the XML file, or undefined when it can. Used for every value. */
export function textProblem(text: string): string | undefined {
  const bad = NOT_IN_XML.exec(text);
  if (!bad) return undefined;
  const code = bad[0].charCodeAt(0);
  if (code >= 0xd800 && code <= 0xdfff)
    return `must not contain a lone surrogate (U+${code.toString(16).toUpperCase()})`;
  return `must not contain the character U+${code.toString(16).toUpperCase().padStart(4, '0')}, which XML 1.0 cannot carry`;
}

/** Why `key` (a setting key, an access key, a pattern, a rule id) is not acceptable, or undefined. */
export function keyProblem(key: string): string | undefined {
  if (key.length === 0) return 'must not be empty';
  if (key.length > MAX_KEY_LENGTH) return `must be at most ${MAX_KEY_LENGTH} characters`;
  const text = textProblem(key);
  if (text) return text;
  if (/[\u0000-\u001f\u007f]/.test(key)) return 'must not contain control characters';
  // The file would carry them, but people read and edit keys: a key that differs from another only
  // by white space at an end is a trap, so it is refused rather than trimmed.
  if (key !== key.trim()) return 'must not start or end with white space';
  return undefined;
}

/** Returns why `name` is not acceptable, or undefined when it is. */
export function nameProblem(name: string): string | undefined {
  if (name.length === 0) return 'must not be empty';
  if (name.length > MAX_NAME_LENGTH) return `must be at most ${MAX_NAME_LENGTH} characters`;
  if (name.includes('/')) return 'must not contain "/"';
  const text = textProblem(name);
  if (text) return text;
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'must not contain control characters';
  if (name !== name.trim()) return 'must not start or end with white space';
  return undefined;
}

/** A zod refinement reporting `problem`'s answer, for schemas that add their own bounds. */
export const refineWith =
  (problem: (value: string) => string | undefined) =>
  (value: string, ctx: z.RefinementCtx): void => {
    const found = problem(value);
    if (found) ctx.addIssue({ code: 'custom', message: found });
  };

const refined = (problem: (value: string) => string | undefined) => z.string().superRefine(refineWith(problem));

/** A zod string that must be an acceptable name (bodies, manifests). */
export const nameSchema = refined(nameProblem);

/** A zod string that must be an acceptable key (setting keys, access keys, patterns). */
export const keySchema = refined(keyProblem);
