/** The environment as the hub reads it (settings.ts): HUB_PG_POLL_MS, validated like the others. */
import { describe, expect, it } from 'vitest';
import { optionsFromEnvironment } from '../src/settings.js';

describe('HUB_PG_POOL_MAX', () => {
  it("sizes each process's PostgreSQL store pool, 8 when unset, and refuses 0 or more than 100", () => {
    expect(optionsFromEnvironment({}).pgPoolMax).toBe(8);
    expect(optionsFromEnvironment({ HUB_PG_POOL_MAX: '4' }).pgPoolMax).toBe(4);
    for (const bad of ['0', '101', '2.5', 'x'])
      expect(() => optionsFromEnvironment({ HUB_PG_POOL_MAX: bad })).toThrow(
        /^Invalid environment variable HUB_PG_POOL_MAX/,
      );
  });
});

describe('HUB_PG_POLL_MS', () => {
  it("sets the PostgreSQL tail reader's fallback interval, 1000 ms when unset", () => {
    expect(optionsFromEnvironment({}).pgPollMs).toBe(1000);
    expect(optionsFromEnvironment({ HUB_PG_POLL_MS: '250' }).pgPollMs).toBe(250);
  });

  it('refuses a value that is not a whole number of ms from 10 to 60000, naming the variable', () => {
    for (const bad of ['abc', '5', '1.5', '60001', '-1'])
      expect(() => optionsFromEnvironment({ HUB_PG_POLL_MS: bad })).toThrow(
        /^Invalid environment variable HUB_PG_POLL_MS/,
      );
  });
});
