/**
 * The hub's `*` patterns (StateObjectPatterns) as SQLite GLOBs: toGlob escapes GLOB's other
 * metacharacters (`?`, `[`), fromGlob undoes it exactly; stored filters are GLOB text and leave the store
 * as patterns again. A shape GLOB would backtrack on (a `*` before more text) is narrowed (narrowGlob):
 * its literal prefix as GLOB (the index), cheap necessary conditions, and src/wildcard.ts's linear
 * matcher for the exact answer.
 */
import type { StateObjectPatterns } from '../../hub/ports/stateObjectPatterns.js';
import { matchesPieces, piecesOf } from '../../wildcard.js';

/** The GLOB that matches what the `*` pattern matches. */
export const toGlob = (pattern: string) => pattern.replace(/[?[]/g, (c) => `[${c}]`);

/** The `*` pattern a GLOB made by toGlob stands for. */
export const fromGlob = (glob: string) => (glob.includes('[') ? glob.replace(/\[([?[])\]/g, '$1') : glob);

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
