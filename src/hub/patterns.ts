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
 * The store matches simple filters (an exact name, `Prefix*`, `*`) with SQLite's own GLOB, which keeps
 * its index for a literal prefix and never backtracks on them. Any other shape (`*Temp`, `a*b`, several
 * stars) SQLite's GLOB evaluates by trying the text after a `*` at every position of a name (~40-80 ms
 * for `a{200}*a{31}b` over 2,000 names of 1 KB): for those, narrowGlob() gives the store the literal
 * prefix as GLOB (still the index), cheap necessary conditions SQLite checks without backtracking (the
 * last piece as the name's end, the longest middle piece somewhere in it), and this matcher for the
 * exact answer over what is left. (Installing this matcher as SQLite's glob() function instead cost
 * ~4 µs a row and lost the prefix index: 300 first polls of `Temp*` took 376 ms instead of 51 ms.)
 */
export const ANY = '*';

export const hasWildcard = (pattern: string) => pattern.includes('*');

export const toGlob = (pattern: string) => pattern.replace(/[?[]/g, (c) => `[${c}]`);

/** The `*` pattern a GLOB made by toGlob stands for. */
export const fromGlob = (glob: string) => glob.replace(/\[([?[])\]/g, '$1');

/** How the store reads rows matching a stored GLOB (see the header). */
export interface GlobNarrowing {
  /** For SQLite's GLOB: the whole GLOB when it is simple, else its literal prefix followed by `*`. */
  glob: string;
  /** Text the value must end with ('' for any). */
  suffix: string;
  /** Text the value must contain ('' for any): the longest piece between two stars. */
  middle: string;
  /** The exact test, in linear time; undefined when `glob` alone is exact. */
  matches: ((value: string) => boolean) | undefined;
}

/** Splits a stored GLOB into what SQLite evaluates cheaply and what is then matched here (see header). */
export function narrowGlob(glob: string): GlobNarrowing {
  const star = glob.indexOf('*');
  if (star < 0 || star === glob.length - 1) return { glob, suffix: '', middle: '', matches: undefined };
  const pattern = fromGlob(glob);
  const pieces = piecesOf(pattern);
  const middle = pieces.slice(1, -1).reduce((longest, p) => (p.length > longest.length ? p : longest), '');
  return {
    glob: glob.slice(0, star + 1),
    suffix: pieces[pieces.length - 1],
    middle,
    matches: (value) => matchesPieces(pieces, value),
  };
}


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
