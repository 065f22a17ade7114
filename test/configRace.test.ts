/**
 * Changes of the running configuration are ordered: management writes racing reloads (the HTTP one and
 * the SIGHUP one) never leave an acknowledged write out of what the hub serves.
 */
import { describe, expect, it } from 'vitest';
import { checkAccess, raceWritesAndReloads } from './support/configRace.js';
import { admin, get, hubsStoppedAfterEach } from './support/testHub.js';

const hub = hubsStoppedAfterEach();

const ROUNDS = Number(process.env.HUB_RACE_ROUNDS ?? 4);
const WRITERS = 4;
const WRITES_PER_WRITER = 12;

describe('management writes racing reloads', () => {
  it(
    'every acknowledged write is served right after (listed, and its key accepted), whatever the order of writes, reloads and SIGHUPs',
    async () => {
      // A refused key answers at once, so that a failing run reports rather than waits.
      const h = await hub({ options: { authFailureStepMs: 0 } });
      const failedRounds: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        // What cli.ts runs on SIGHUP, in process.
        const { acknowledged, refused, notServed } = await raceWritesAndReloads(
          [{ url: h.url, sighup: () => h.reloadConfiguration() }],
          round,
          { writers: WRITERS, writes: WRITES_PER_WRITER },
        );
        // Right after the race, before anything else changes the configuration.
        const listed = new Set(
          (await get(h, 'management/credentials', admin)).json<{ Name: string }[]>().map((c) => c.Name),
        );
        const missing = acknowledged.filter((w) => !listed.has(w.name)).map((w) => w.name);
        const rejected: string[] = [];
        for (const w of acknowledged) {
          const check = await checkAccess(h, w.key);
          if (check !== 200) rejected.push(`${w.name} → ${check}`);
        }
        if (missing.length || rejected.length || refused.length || notServed.length) {
          const first = [
            ...missing.slice(0, 2),
            ...rejected.slice(0, 2),
            ...notServed.slice(0, 2),
            ...refused.slice(0, 1).map((r) => r.slice(0, 120)),
          ];
          failedRounds.push(
            `round ${round}: after the race ${missing.length} acknowledged not listed and ${rejected.length} keys refused; ` +
              `during it ${notServed.length} keys refused just after their write, ${refused.length} requests refused (${first.join('; ')})`,
          );
        }
      }
      expect(failedRounds, `${failedRounds.length} of ${ROUNDS} rounds failed`).toEqual([]);
    },
    30_000 + ROUNDS * 5_000,
  );
});
