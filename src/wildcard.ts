/**
 * The `*` pattern language of the interfaces' filters (`name=Temperature*`): `*` is any run of
 * characters (none included) and every other character stands for itself. One definition in memory for
 * the hub (authorization rules, the notifier, through hub/access/patterns.ts) and for the SQLite store (the
 * exact test after it narrowed a filter, store/sqlite/glob.ts), so both decide "matches" alike. Plain
 * TypeScript: no engine, no hub.
 *
 * A pattern is matched without backtracking: split at the stars, the first piece must be a prefix, the
 * last a suffix, and each piece between them is found left to right with indexOf — taking the leftmost
 * occurrence of each is always right when `*` is the only metacharacter. The time is linear in the
 * value's length for a pattern of bounded length (a regex `^.*Light.*On.*$` took 9 s on a 160 KB value:
 * V8 backtracks).
 */
export const ANY = '*';

export const hasWildcard = (pattern: string) => pattern.includes('*');

const cache = new Map<string, string[]>();

/** The pattern split at its stars (cached: the same few patterns are matched again and again). */
export function piecesOf(pattern: string): string[] {
  let pieces = cache.get(pattern);
  if (!pieces) {
    pieces = pattern.split('*');
    if (cache.size > 1000) cache.clear();
    cache.set(pattern, pieces);
  }
  return pieces;
}

/** Matches `value` against a `*` pattern, in linear time. */
export function matchesPattern(pattern: string, value: string): boolean {
  if (pattern === ANY) return true;
  if (!hasWildcard(pattern)) return pattern === value;
  return matchesPieces(piecesOf(pattern), value);
}

/** Matches `value` against a pattern already split at its stars (piecesOf). */
export function matchesPieces(pieces: string[], value: string): boolean {
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
