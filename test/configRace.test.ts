/**
 * Changes of the running configuration are ordered: management writes racing reloads (the HTTP one and
 * the SIGHUP one) never leave an acknowledged write out of what the hub serves.
 */
import { describe, expect, it } from 'vitest';
import type { TestHub } from './support/testHub.js';
import { admin, get, hubsStoppedAfterEach, post } from './support/testHub.js';

const hub = hubsStoppedAfterEach();

const ROUNDS = Number(process.env.HUB_RACE_ROUNDS ?? 4);
const WRITERS = 4;
const WRITES_PER_WRITER = 12;

interface Written {
  name: string;
  key: string;
}

/** One round: WRITERS clients add credentials in a loop while both reloads run in loops until they finish. */
async function race(
  h: TestHub,
  round: number,
): Promise<{ acknowledged: Written[]; refused: string[]; notServed: string[] }> {
  const acknowledged: Written[] = [];
  const refused: string[] = [];
  const notServed: string[] = [];
  let writing = true;
  const writers = Array.from({ length: WRITERS }, async (_, w) => {
    for (let i = 0; i < WRITES_PER_WRITER; i++) {
      const written = { name: `r${round}w${w}_${i}`, key: `race-key-${round}-${w}-${i}` };
      const reply = await post(h, 'management/credentials', admin, { Name: written.name, AccessKey: written.key });
      if (reply.status !== 200) {
        refused.push(`${written.name}: ${reply.status} ${reply.text}`);
        continue;
      }
      acknowledged.push(written);
      // Served at once: whatever runs beside it, nothing may put back a configuration without it.
      const check = await checkAccess(h, written.key);
      if (check !== 200) notServed.push(`${written.name} → ${check} just after its 200`);
    }
  });
  const reloads: Promise<void>[] = [
    (async () => {
      while (writing) {
        const reply = await get(h, 'management/configuration/reload', admin);
        if (reply.status !== 200) refused.push(`reload: ${reply.status} ${reply.text}`);
      }
    })(),
    // What cli.ts runs on SIGHUP.
    (async () => {
      while (writing) await h.reloadConfiguration();
    })(),
  ];
  await Promise.all(writers);
  writing = false;
  await Promise.all(reloads);
  return { acknowledged, refused, notServed };
}

const checkAccess = async (h: TestHub, key: string) =>
  (await get(h, 'consumer/CheckAccess', { SentinelName: 'Consumer', PackageName: 'Race', AccessKey: key })).status;

describe('management writes racing reloads', () => {
  it(
    'every acknowledged write is served right after (listed, and its key accepted), whatever the order of writes, reloads and SIGHUPs',
    async () => {
      // A refused key answers at once, so that a failing run reports rather than waits.
      const h = await hub({ options: { authFailureStepMs: 0 } });
      const failedRounds: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const { acknowledged, refused, notServed } = await race(h, round);
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
