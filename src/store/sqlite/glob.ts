/**
 * The SQLite store evaluates the hub's `*` filters (hub/ports/stateObjects.ts, StateObjectPatterns) with SQLite's GLOB:
 * toGlob escapes GLOB's other metacharacters (`?` and `[` become `[?]` and `[[]`), fromGlob undoes it
 * exactly. Stored filters (`state_object_filters.*_glob`) are kept as GLOB text; the store converts at
 * its boundary, both ways, so nothing GLOB-shaped leaves src/store.
 *
 * Simple filters (an exact name, `Prefix*`, `*`) are SQLite's own GLOB, which keeps its index for a
 * literal prefix and never backtracks on them. Any other shape (`*Temp`, `a*b`, several stars) SQLite's
 * GLOB evaluates by trying the text after a `*` at every position of a name (~40-80 ms for
 * `a{200}*a{31}b` over 2,000 names of 1 KB): for those, narrowGlob() gives the store the literal prefix
 * as GLOB (still the index), cheap necessary conditions SQLite checks without backtracking (the last
 * piece as the name's end, the longest middle piece somewhere in it), and the linear `*` matcher of
 * src/wildcard.ts for the exact answer over what is left. (Installing that matcher as SQLite's glob()
 * function instead cost ~4 µs a row and lost the prefix index: 300 first polls of `Temp*` took 376 ms
 * instead of 51 ms.)
 */
import type { StateObjectPatterns } from '../../hub/ports/stateObjects.js';
import { matchesPieces, piecesOf } from '../../wildcard.js';

/** The GLOB that matches what the `*` pattern matches. */
export const toGlob = (pattern: string) => pattern.replace(/[?[]/g, (c) => `[${c}]`);

/** The `*` pattern a GLOB made by toGlob stands for. */
export const fromGlob = (glob: string) => glob.replace(/\[([?[])\]/g, '$1');

/** The four keys' GLOBs (toGlob of a StateObjectPatterns): SQLite-only, never outside src/store. */
export interface StateObjectGlobs {
  sentinel: string;
  package: string;
  name: string;
  type: string;
}

export const globsOf = (p: StateObjectPatterns): StateObjectGlobs => ({
  sentinel: toGlob(p.sentinel),
  package: toGlob(p.package),
  name: toGlob(p.name),
  type: toGlob(p.type),
});

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

/** Splits a GLOB made by toGlob into what SQLite evaluates cheaply and what is then matched here (see header). */
export function narrowGlob(glob: string): GlobNarrowing {
  const star = glob.indexOf('*');
  if (star < 0 || star === glob.length - 1) return { glob, suffix: '', middle: '', matches: undefined };
  const pieces = piecesOf(fromGlob(glob));
  const middle = pieces.slice(1, -1).reduce((longest, p) => (p.length > longest.length ? p : longest), '');
  return {
    glob: glob.slice(0, star + 1),
    suffix: pieces[pieces.length - 1],
    middle,
    matches: (value) => matchesPieces(pieces, value),
  };
}
