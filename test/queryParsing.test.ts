/** The hub's one-pass query parser reads what node:querystring reads: the same names, values and decoding. */
import fc from 'fast-check';
import querystring from 'node:querystring';
import { describe, expect, it } from 'vitest';
import { parseQuery } from '../src/http/request.js';

/** What the hub read before: querystring.parse, names lower-cased, the first value of each. */
function byQuerystring(raw: string): Map<string, string> {
  const query = new Map<string, string>();
  const parsed = querystring.parse(raw);
  for (const key in parsed) {
    const value = parsed[key];
    const lower = key.toLowerCase();
    if (!query.has(lower) && value !== undefined) query.set(lower, Array.isArray(value) ? value[0] : value);
  }
  return query;
}

/**
 * Query strings built from the characters that matter: separators, escapes (well-formed or not), `+`,
 * letters of both cases. Non-ASCII as HTTP clients send it, percent-encoded.
 */
const queryText = fc
  .array(
    fc.constantFrom('&', '=', '+', '%', '%2', '%41', '%zz', '%E2%82%AC', '%C3%A9', '%2B', 'a', 'A', 'b', ' ', '0'),
    {
      maxLength: 40,
    },
  )
  .map((parts) => parts.join(''));

describe('query parsing', () => {
  it('gives what node:querystring gives, name by name', () => {
    fc.assert(
      fc.property(queryText, (raw) => {
        expect(Object.fromEntries(parseQuery(raw))).toEqual(Object.fromEntries(byQuerystring(raw)));
      }),
      { numRuns: 2000 },
    );
  });

  it('reads a device’s query: names of any case, the first value of a repeated name, escapes decoded', () => {
    const query = parseQuery('SentinelName=S1&sentinelname=S2&Name=a%2Bb+c&value=%7B%22x%22%3A1%7D&flag&=empty');
    expect(query.get('sentinelname')).toBe('S1');
    expect(query.get('name')).toBe('a+b c');
    expect(query.get('value')).toBe('{"x":1}');
    expect(query.get('flag')).toBe('');
    expect(query.get('')).toBe('empty');
  });

  it('keeps a raw non-ASCII character as it came, escapes or not around it', () => {
    // node:querystring's lenient fallback can turn such a character into U+FFFD; clients percent-encode it.
    expect(parseQuery('name=é%2&x=%41é').get('name')).toBe('é%2');
    expect(parseQuery('name=é%2&x=%41é').get('x')).toBe('Aé');
  });

  it('reads bare names before one long pair', () => {
    // 999 bare names then one pair (parseQuery looks for the one `=` once, not once per name).
    const raw = `${'n&'.repeat(999)}last=${'v'.repeat(10_000)}`;
    const query = parseQuery(raw);
    expect(query.get('n')).toBe('');
    expect(query.get('last')).toHaveLength(10_000);
  });

  it('reads at most 1,000 pairs, as node:querystring does', () => {
    const raw = Array.from({ length: 1200 }, (_, i) => `p${i}=${i}`).join('&');
    expect(parseQuery(raw).size).toBe(1000);
    expect(parseQuery(raw).has('p1000')).toBe(false);
  });
});
