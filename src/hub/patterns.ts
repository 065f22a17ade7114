/**
 * Filters of the interfaces use `*` as "any run of characters" (`name=Temperature*`); nothing else is
 * special. The store keeps them as SQLite GLOB patterns, with GLOB's other metacharacters escaped.
 *
 * In memory (authorization rules) a pattern is matched without backtracking: split at the stars, the
 * first piece must be a prefix, the last a suffix, and each piece between them is found left to right
 * with indexOf — taking the leftmost occurrence of each is always right when `*` is the only
 * metacharacter. The time is linear in the value's length for a pattern of bounded length (a regex
 * `^.*Light.*On.*$` took 9 s on a 160 KB value: V8 backtracks).
 */
export const ANY = '*';

export const hasWildcard = (pattern: string) => pattern.includes('*');

export const toGlob = (pattern: string) => pattern.replace(/[?[]/g, (c) => `[${c}]`);

/** The `*` pattern a stored GLOB came from (toGlob's inverse). */
export const fromGlob = (glob: string) => glob.replace(/\[([?[])\]/g, '$1');

const cache = new Map<string, string[]>();

function piecesOf(pattern: string): string[] {
  let pieces = cache.get(pattern);
  if (!pieces) {
    pieces = pattern.split('*');
    if (cache.size > 1000) cache.clear();
    cache.set(pattern, pieces);
  }
  return pieces;
}

/** Matches `value` against a `*` pattern in memory (authorization rules), in linear time. */
export function matchesPattern(pattern: string, value: string): boolean {
  if (pattern === ANY) return true;
  if (!hasWildcard(pattern)) return pattern === value;
  return matchesPieces(piecesOf(pattern), value);
}

const globCache = new Map<string, string[]>();

/**
 * SQLite's GLOB operator for the hub's own patterns (toGlob's output), in linear time: db/open.ts
 * installs it in place of SQLite's, which tries the text after each `*` at every position of the value
 * (a 256-character filter over 2,000 names of 1 KB held the event loop for half a second).
 */
export function matchesGlob(glob: string, value: string): boolean {
  if (glob === ANY) return true;
  let pieces = globCache.get(glob);
  if (!pieces) {
    pieces = fromGlob(glob).split('*');
    if (globCache.size > 1000) globCache.clear();
    globCache.set(glob, pieces);
  }
  return pieces.length === 1 ? pieces[0] === value : matchesPieces(pieces, value);
}

function matchesPieces(pieces: string[], value: string): boolean {
  const first = pieces[0];
  const last = pieces[pieces.length - 1];
  if (value.length < first.length + last.length) return false;
  if (!value.startsWith(first) || !value.endsWith(last)) return false;
  let from = first.length;
  const end = value.length - last.length;
  for (let i = 1; i < pieces.length - 1; i++) {
    const piece = pieces[i];
    if (piece === '') continue;
    const at = value.indexOf(piece, from);
    if (at < 0 || at + piece.length > end) return false;
    from = at + piece.length;
  }
  return true;
}
