/**
 * Whatever strings a client sends as names, keys and values: each management write is refused with 400,
 * or acknowledged, and then a real restart on the same directory gives back exactly what was acknowledged.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { constellationFile, controlHub } from './support/constellation.js';
import type { TestHub } from './support/testHub.js';
import { get, post, startTestHub, tempDir } from './support/testHub.js';

// Strings that have broken round trips before: white space at the ends, controls, NUL, lone surrogates,
// XML's special characters, line breaks, astral characters.
const tricky = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom(
    'k',
    'k ',
    ' k',
    'X\ud800',
    'X\udbff',
    'a\u0000b',
    '<&>"\'',
    'line\nbreak',
    'cr\r\nlf',
    'tab\there',
    '😀',
    '\ufffe',
    '__proto__',
    'constructor',
  ),
);

describe('acknowledged means kept', () => {
  it('random names, keys and values: refused with 400 or read back identically after a restart', async () => {
    const dataDir = tempDir();
    let h: TestHub = await startTestHub({ dataDir, config: constellationFile });
    const settings: Record<string, string> = { PortName: 'COM4', Zones: '[ "Hall", "Kitchen" ]' };
    const sentinels = new Set(['MyServer']);
    const credentials = new Map<string, string>();
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(fc.constantFrom('setting', 'sentinel', 'credential'), tricky, tricky), {
            minLength: 1,
            maxLength: 4,
          }),
          async (writes) => {
            for (const [kind, a, b] of writes) {
              if (kind === 'setting') {
                const next = { ...settings, [a]: b };
                const reply = await post(
                  h,
                  'management/sentinels/MyServer/packages/Paradox/settings',
                  controlHub,
                  next,
                );
                expect([200, 400]).toContain(reply.status);
                if (reply.status === 200) {
                  Object.assign(settings, { [a]: b });
                  expect(reply.json()).toEqual(settings);
                }
              } else if (kind === 'sentinel') {
                const reply = await post(h, 'management/sentinels', controlHub, {
                  Name: a,
                  Credential: 'StandardAccess',
                });
                expect([200, 400, 409]).toContain(reply.status);
                if (reply.status === 200) sentinels.add(a);
              } else {
                const key = `${b}-access-key`;
                const reply = await post(h, 'management/credentials', controlHub, { Name: a, AccessKey: key });
                expect([200, 400, 409]).toContain(reply.status);
                if (reply.status === 200) credentials.set(a, key);
              }
            }
          },
        ),
        { numRuns: 25, seed: Number(process.env.HUB_FUZZ_SEED ?? 1), endOnFailure: true },
      );
      // The run did store odd things, not only refuse them.
      expect(Object.keys(settings).length).toBeGreaterThan(5);
      expect(credentials.size + sentinels.size).toBeGreaterThan(5);
      await h.stop();
      h = await startTestHub({ dataDir });
      expect((await get(h, 'management/sentinels/MyServer/packages/Paradox/settings', controlHub)).json()).toEqual(
        settings,
      );
      const names = (await get(h, 'management/sentinels', controlHub)).json<{ Name: string }[]>().map((s) => s.Name);
      expect(new Set(names)).toEqual(sentinels);
      const stored = new Map(
        (await get(h, 'management/credentials', controlHub, { includeAccessKeys: 'true' }))
          .json<{ Name: string; AccessKey: string }[]>()
          .map((c) => [c.Name, c.AccessKey]),
      );
      for (const [name, key] of credentials) expect(stored.get(name)).toBe(key);
    } finally {
      await h.stop();
    }
  });
});
