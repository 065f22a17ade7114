/**
 * Filters of the interfaces use `*` as "any run of characters" (`name=Temperature*`); nothing else is
 * special. The store keeps them as SQLite GLOB patterns, with GLOB's other metacharacters escaped.
 *
 * In memory (authorization rules) a pattern is matched without backtracking: split at the stars, the
 * first piece must be a prefix, the last a suffix, and each piece between them is found left to right
 * with indexOf — taking the leftmost occurrence of each is always right when `*` is the only
 * metacharacter. The time is linear in the value's length for a pattern of bounded length (a regex
 * `^.*Light.*On.*$` took 9 s on a 160 KB value: V8 backtracks).
 *
 * The store matches filters with SQLite's own GLOB, which keeps its index for a literal prefix
 * (`Temperature*`) but tries the text after a `*` at every position of a name: requestNames.ts bounds
 * that text, so a match costs at most MAX_FILTER_TEXT_AFTER_STAR comparisons per character of the name.
 * (Installing this matcher as SQLite's glob() made the worst filter 15 times cheaper but lost the prefix
 * index: 300 first polls of `Temp*` subscriptions took 376 ms instead of 51 ms.)
 */
export const ANY = '*';

export const hasWildcard = (pattern: string) => pattern.includes('*');

export const toGlob = (pattern: string) => pattern.replace(/[?[]/g, (c) => `[${c}]`);


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
