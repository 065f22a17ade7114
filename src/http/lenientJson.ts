/**
 * Values in query strings and POST bodies are lenient JSON (JSON5: single quotes, unquoted keys,
 * trailing commas), as device firmware and the documented curl examples send them (wire.md).
 */
import JSON5 from 'json5';

/** JSON has no Infinity or NaN: a value holding them would not survive storage. */
function isJsonSafe(value: unknown, depth = 0): boolean {
  if (depth > 64) return false;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every((v) => isJsonSafe(v, depth + 1));
  if (value !== null && typeof value === 'object') {
    return Object.values(value).every((v) => isJsonSafe(v, depth + 1));
  }
  return true;
}

/** Parses lenient JSON; throws SyntaxError when the text is not lenient JSON. */
export function parseLenientJson(text: string): unknown {
  let value: unknown;
  try {
    // Most values are strict JSON already, and JSON.parse is many times faster than JSON5.
    value = JSON.parse(text);
  } catch {
    value = JSON5.parse(text);
  }
  if (!isJsonSafe(value)) throw new SyntaxError('numbers must be finite and nesting at most 64 levels deep');
  return value;
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
