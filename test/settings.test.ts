/** The environment as the hub reads it (settings.ts): HUB_PG_POLL_MS, validated like the others. */
import { describe, expect, it } from 'vitest';
import { optionsFromEnvironment } from '../src/settings.js';

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
