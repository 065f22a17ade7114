/**
 * Filters of the interfaces use `*` as "any run of characters" (`name=Temperature*`); nothing else is
 * special. The store keeps them as SQLite GLOB patterns, with GLOB's other metacharacters escaped.
 */
export const ANY = '*';

export const hasWildcard = (pattern: string) => pattern.includes('*');

export const toGlob = (pattern: string) => pattern.replace(/[?[]/g, (c) => `[${c}]`);

const cache = new Map<string, RegExp>();

/** Matches `value` against a `*` pattern in memory (authorization rules). */
export function matchesPattern(pattern: string, value: string): boolean {
  if (pattern === ANY) return true;
  if (!hasWildcard(pattern)) return pattern === value;
  let regex = cache.get(pattern);
  if (!regex) {
    const body = pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*');
    regex = new RegExp(`^${body}$`, 's');
    if (cache.size > 1000) cache.clear();
    cache.set(pattern, regex);
  }
  return regex.test(value);
}
