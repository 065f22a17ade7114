/**
 * The one rule for names that arrive in requests: StateObject names and types, message keys, groups,
 * saga ids, scope arguments, metadata and setting keys, and the `*` filters over them. A name has a
 * length limit and no control characters: NUL in particular would truncate a pattern handed to SQLite
 * (`name=Keep%00x` matched `Keep`). Names of configured things (sentinels, packages, credentials) are
 * also bound by config/names.ts when they are created.
 */
import { z } from 'zod';
import { textProblem } from '../../config/names.js';
import { hubError } from '../../errors.js';

const MAX_REQUEST_NAME_LENGTH = 1024;
/**
 * A filter may be as long as a name: a StateObject pushed with a 1,024-character name must be
 * requestable, subscribable and purgeable by that exact name (a 256 limit left such an object reachable
 * only through a wildcard). What bounds a filter's cost is the text after its first `*`, below.
 */
const MAX_FILTER_LENGTH = MAX_REQUEST_NAME_LENGTH;
/** StateObject types (`System.Double`, a package's own type names) and their `type` filters. */
export const MAX_TYPE_LENGTH = 256;
/**
 * SQLite's GLOB tries the text after a `*` at every position of a name: its cost per name is the
 * name's length times that text's length (a 256-character `*aaa…b` over 2,000 names of 1 KB held the
 * event loop for half a second). The text after the first `*` (stars aside) is therefore bounded, which
 * keeps a match linear in the name's length; a literal prefix before the first `*` costs one comparison
 * (and uses the index) and may be as long as the filter.
 */
export const MAX_FILTER_TEXT_AFTER_STAR = 32;

const CONTROL = /[\u0000-\u001f\u007f]/;

/** Why `value` is not an acceptable name (or filter, with `max` = MAX_FILTER_LENGTH), or undefined. */
export function requestNameProblem(value: string, max = MAX_REQUEST_NAME_LENGTH): string | undefined {
  if (value.length > max) return `must be at most ${max} characters`;
  if (CONTROL.test(value)) return 'must not contain control characters (NUL included)';
  // Lone surrogates would come back from SQLite as U+FFFD: a different name from the one sent.
  return textProblem(value);
}

/** Why `filter` is not an acceptable `*` filter, or undefined. */
export function filterProblem(filter: string): string | undefined {
  const problem = requestNameProblem(filter, MAX_FILTER_LENGTH);
  if (problem) return problem;
  const star = filter.indexOf('*');
  if (star < 0) return undefined;
  const textAfter = filter.slice(star).replaceAll('*', '').length;
  if (textAfter > MAX_FILTER_TEXT_AFTER_STAR)
    return `must have at most ${MAX_FILTER_TEXT_AFTER_STAR} characters other than '*' after its first '*'`;
  return undefined;
}

/** Throws the 400 for a name parameter or field that breaks the rule. */
export function checkRequestName(what: string, value: string, max = MAX_REQUEST_NAME_LENGTH): string {
  return reportProblem(what, value, requestNameProblem(value, max));
}

/** Throws the 400 for a `*` filter that breaks the rule. */
export const checkFilter = (what: string, value: string): string => reportProblem(what, value, filterProblem(value));

function reportProblem(what: string, value: string, problem: string | undefined): string {
  if (problem)
    throw hubError(
      'InvalidName',
      { what, problem },
      `Got ${JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value)}.`,
    );
  return value;
}

/** A zod string bound by the rule (bodies). */
export const requestName = (max = MAX_REQUEST_NAME_LENGTH) =>
  z.string().superRefine((value, ctx) => {
    const problem = requestNameProblem(value, max);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
