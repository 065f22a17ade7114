/** Reading parameters, authentication values and JSON bodies off a request, with clear 400s. */
import type { Context } from 'koa';
import querystring from 'node:querystring';
import { nameProblem } from '../config/names.js';
import { hubError } from '../errors.js';
import type { AuthenticationValues } from '../hub/access/authentication.js';
import type { HubState } from './context.js';
import { parseLenientJson } from './lenientJson.js';
import { checkFilter, checkRequestName } from '../hub/access/requestNames.js';

/** A percent-escape node:querystring decodes: `%` and two hex digits. */
const ESCAPE = /%[0-9a-f]{2}/i;

/**
 * A query string's part decoded as node:querystring decodes it: `+` is a space, and only a part with a
 * well-formed escape goes through querystring.unescape (lenient on the malformed ones); most have neither.
 */
function decodePart(part: string): string {
  const spaced = part.indexOf('+') < 0 ? part : part.replace(/\+/g, ' ');
  return spaced.indexOf('%') >= 0 && ESCAPE.test(spaced) ? querystring.unescape(spaced) : spaced;
}

/** node:querystring's default cap on the pairs read. */
const MAX_PAIRS = 1000;

/**
 * The query string's parameters by lower-cased name, the first value of each: what `querystring.parse`
 * gives for what HTTP clients send (non-ASCII percent-encoded; the same decoding, the same 1,000 pairs
 * at most; test/queryParsing.test.ts), read in one pass straight into the map, without its intermediate
 * object (a push's query in 0.41 µs against 1.05). A raw non-ASCII character is kept as it came, where
 * querystring's lenient fallback could turn it into U+FFFD.
 */
export function parseQuery(raw: string): Map<string, string> {
  const query = new Map<string, string>();
  let start = 0;
  // The first `=` at or after `start` (-1: none left), kept across pairs: looked for again only once
  // passed, so pairs without one cost no scan to the far end each (the parse stays linear).
  let equals = raw.indexOf('=');
  for (let pairs = 0; start < raw.length && pairs < MAX_PAIRS; start++) {
    let end = raw.indexOf('&', start);
    if (end < 0) end = raw.length;
    if (end > start) {
      pairs++;
      if (equals >= 0 && equals < start) equals = raw.indexOf('=', start);
      const split = equals >= 0 && equals < end;
      const key = decodePart(raw.slice(start, split ? equals : end)).toLowerCase();
      if (!query.has(key)) query.set(key, split ? decodePart(raw.slice(equals + 1, end)) : '');
    }
    start = end;
  }
  return query;
}

/**
 * Query parameter by name, case-insensitive (ASP.NET-era clients vary the case); first value wins.
 * Parsed once per request (parseQuery) straight from the raw query string: Koa's `ctx.query` goes
 * through URLSearchParams and costs several times more on the push path.
 */
export function queryParam(ctx: Context, name: string): string | undefined {
  const state = ctx.state as HubState;
  const query = (state.query ??= parseQuery(ctx.querystring));
  return query.get(name.toLowerCase());
}

export function requiredParam(ctx: Context, name: string): string {
  const value = queryParam(ctx, name);
  if (value === undefined || value === '') {
    throw hubError('MissingParameter', { parameter: name });
  }
  return value;
}

/** A required name parameter (StateObject name, message key, group), bound by the request-name rule. */
export const nameParam = (ctx: Context, name: string) =>
  checkRequestName(`parameter '${name}'`, requiredParam(ctx, name));

/** An optional name parameter; absent or empty gives undefined. */
export function optionalNameParam(ctx: Context, name: string, max?: number): string | undefined {
  const value = queryParam(ctx, name);
  return value ? checkRequestName(`parameter '${name}'`, value, max) : undefined;
}

/** `*`-filter parameter: absent or empty means any; bound by the request-name rule with the filter length. */
export const filterParam = (ctx: Context, name: string) =>
  checkFilter(`filter '${name}'`, queryParam(ctx, name) || '*');

export const TIMEOUT = { default: 60_000, min: 1_000, max: 120_000 };

/** Long-poll timeout in ms: default 60000, clamped to 1000..120000, 0 answers at once (wire.md). */
export function timeoutParam(ctx: Context): number {
  const raw = queryParam(ctx, 'timeout');
  if (raw === undefined || raw === '') return TIMEOUT.default;
  if (!/^\d+$/.test(raw.trim())) {
    throw hubError('InvalidParameter', { parameter: 'timeout', expected: 'a whole number of milliseconds', got: raw });
  }
  const ms = Number(raw);
  if (ms === 0) return 0;
  return Math.min(TIMEOUT.max, Math.max(TIMEOUT.min, ms));
}

/** Maximum number of items returned; 0 (default) means no limit. */
export function limitParam(ctx: Context): number {
  const raw = queryParam(ctx, 'limit');
  if (raw === undefined || raw === '') return 0;
  if (!/^\d{1,9}$/.test(raw.trim())) {
    throw hubError('InvalidParameter', { parameter: 'limit', expected: 'a whole number ≥ 0', got: raw });
  }
  return Number(raw);
}

/** The three authentication values, from the query or else from headers of the same names. */
export function authenticationValues(ctx: Context): AuthenticationValues {
  const read = (name: string) => queryParam(ctx, name) ?? (ctx.get(name) || undefined);
  return { sentinelName: read('SentinelName'), packageName: read('PackageName'), accessKey: read('AccessKey') };
}

const isJsonType = (ctx: Context) => typeof ctx.is('application/json', 'application/*+json') === 'string';

/** The request's JSON body (lenient JSON); requires `Content-Type: application/json`. */
export function jsonBody(ctx: Context): unknown {
  if (!isJsonType(ctx)) {
    throw hubError(
      'UnsupportedContentType',
      { expected: "JSON with 'Content-Type: application/json'" },
      `Got '${ctx.get('Content-Type') || 'no Content-Type'}'.`,
    );
  }
  const text = (ctx.request as { body?: unknown }).body;
  if (typeof text !== 'string' || text.trim() === '') throw hubError('MissingBody');
  try {
    return parseLenientJson(text);
  } catch (error) {
    throw hubError('MalformedJson', (error as Error).message);
  }
}

/** A name taken from the path (already URL-decoded by the router), validated like every name. */
export function pathName(ctx: Context, param: string): string {
  const value = (ctx.params as Record<string, string> | undefined)?.[param] ?? '';
  const problem = nameProblem(value);
  if (problem) throw hubError('InvalidName', { what: `${param} in the path`, problem });
  return value;
}
