/** The `*` matcher of authorization rules and in-memory filters: right answers, and linear time. */
import { describe, expect, it } from 'vitest';
import { matchesPattern } from '../src/hub/access/patterns.js';
import { filterProblem, requestNameProblem } from '../src/hub/access/requestNames.js';

describe('matchesPattern', () => {
  it.each([
    ['*', '', true],
    ['*', 'anything', true],
    ['Light', 'Light', true],
    ['Light', 'light', false],
    ['*Light*On*', 'KitchenLightOn', true],
    ['*Light*On*', 'LightOn', true],
    ['*Light*On*', 'OnLight', false],
    ['*Light*On*', 'KitchenLightOff', false],
    ['Temp*', 'Temperature', true],
    ['Temp*', 'Tem', false],
    ['*ture', 'Temperature', true],
    ['a*a', 'a', false],
    ['a*a', 'aa', true],
    ['ab*ba', 'aba', false],
    ['a**b', 'ab', true],
    ['*.?[x]', 'file.?[x]', true],
    ['*.?[x]', 'file.a[x]', false],
  ])('%s against %s is %s', (pattern, value, expected) => {
    expect(matchesPattern(pattern, value)).toBe(expected);
  });

  it('answers a 160 KB value against *Light*On* without backtracking', () => {
    // With a backtracking regex this value took 9 s once, so these 100 matches would outlast the test's
    // timeout (vitest fails a synchronous test that overran it); the matcher here is a few indexOf calls.
    const hostile = 'Light'.repeat(32 * 1024);
    for (let i = 0; i < 100; i++) expect(matchesPattern('*Light*On*', hostile)).toBe(false);
    expect(matchesPattern('*Light*On*', `${hostile}On`)).toBe(true);
  });
});

describe('requestNameProblem', () => {
  it('refuses NUL, other control characters, lone surrogates and over-long names; keeps the rest', () => {
    expect(requestNameProblem('Keep\u0000x')).toMatch(/control characters/);
    expect(requestNameProblem('a\tb')).toMatch(/control characters/);
    expect(requestNameProblem('a\u007fb')).toMatch(/control characters/);
    expect(requestNameProblem('a\ud800b')).toMatch(/lone surrogate/);
    expect(requestNameProblem('x'.repeat(1025))).toMatch(/at most 1024/);
    expect(requestNameProblem('*'.repeat(257), 256)).toMatch(/at most 256/);
    for (const ok of ['Temperature', 'Home/Kitchen Light', '🙂 Lampe à pied', '__Response', 'x'.repeat(1024)])
      expect(requestNameProblem(ok)).toBeUndefined();
  });
});

describe('filterProblem', () => {
  it('bounds the text after the first * (SQLite GLOB retries it at every position), not a literal prefix', () => {
    expect(filterProblem('Temperature*')).toBeUndefined();
    expect(filterProblem(`${'P'.repeat(200)}*`)).toBeUndefined();
    expect(filterProblem(`*${'a'.repeat(32)}`)).toBeUndefined();
    expect(filterProblem(`*${'a*'.repeat(32)}`)).toBeUndefined();
    expect(filterProblem(`*${'a'.repeat(33)}`)).toMatch(/at most 32 characters other than/);
    expect(filterProblem(`x*${'a*'.repeat(33)}`)).toMatch(/at most 32/);
    expect(filterProblem('*'.repeat(1025))).toMatch(/at most 1024/);
    // A filter may be as long as a name: every name that can be pushed can be asked for exactly.
    expect(filterProblem('n'.repeat(1024))).toBeUndefined();
    expect(filterProblem(`${'n'.repeat(991)}*${'e'.repeat(32)}`)).toBeUndefined();
    expect(filterProblem('a\u0000*')).toMatch(/control characters/);
  });
});
