/**
 * Values in query strings and POST bodies are lenient JSON (JSON5: single quotes, unquoted keys,
 * trailing commas), as device firmware and the documented curl examples send them (wire.md).
 */
import JSON5 from 'json5';

/**
 * Rebuilds every object of a parsed value without a prototype, so that no key from a request
 * (`constructor`, `toString`, `hasOwnProperty`) can ever reach an `Object.prototype` member in a
 * lookup, and refuses the key `__proto__` outright: assigned to an ordinary object it would replace
 * the prototype instead of adding a key. Also refuses what JSON cannot store (Infinity, NaN) and
 * nesting deeper than 64 levels.
 */
function hardened(value: unknown, depth = 0): unknown {
  if (depth > 64) throw new SyntaxError('nesting must be at most 64 levels deep');
  if (typeof value === 'number' && !Number.isFinite(value)) throw new SyntaxError('numbers must be finite');
  if (Array.isArray(value)) return value.map((v) => hardened(v, depth + 1));
  if (value !== null && typeof value === 'object') {
    const out = Object.create(null) as Record<string, unknown>;
    for (const key of Object.keys(value)) {
      if (key === '__proto__') throw new SyntaxError("the key '__proto__' is not allowed");
      out[key] = hardened((value as Record<string, unknown>)[key], depth + 1);
    }
    return out;
  }
  return value;
}

/**
 * JSON5 parses about 20 times slower than JSON.parse (a 1 MB lenient body held the event loop for
 * tens of milliseconds): texts longer than this must be strict JSON. Devices and curl examples send
 * lenient JSON in small bodies and query values only.
 */
export const MAX_LENIENT_JSON_LENGTH = 64 * 1024;

/** Parses lenient JSON into prototype-free objects; throws SyntaxError when the text is not acceptable. */
export function parseLenientJson(text: string): unknown {
  let value: unknown;
  try {
    // Most values are strict JSON already, and JSON.parse is many times faster than JSON5.
    value = JSON.parse(text);
  } catch (error) {
    if (text.length > MAX_LENIENT_JSON_LENGTH) {
      throw new SyntaxError(
        `${(error as Error).message} (texts over ${MAX_LENIENT_JSON_LENGTH / 1024} KB must be strict JSON)`,
        { cause: error },
      );
    }
    value = JSON5.parse(text);
  }
  return hardened(value);
}

/** What lenient JSON can start with (after blanks): anything else is plain text, no parse attempted. */
const MAY_BE_JSON = /^\s*[-+.\d{["'tfnIN/]/;

/** A query value: lenient JSON when it parses (`21`, `true`, `{ a: 1 }`), the plain text otherwise. */
export function parseQueryValue(text: string): unknown {
  // Devices push plain words (`on`, `open`) all the time: two failed parses would each build an exception.
  if (!MAY_BE_JSON.test(text)) return text;
  try {
    return parseLenientJson(text);
  } catch {
    return text;
  }
}
