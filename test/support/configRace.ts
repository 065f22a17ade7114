/**
 * The race of configRace.test.ts (one hub) and postgresConfigRace.test.ts (two processes on one
 * database): management writes through every hub while each hub reloads its configuration in two loops,
 * the HTTP reload and the SIGHUP one, until the writes are done.
 */
import { admin, get, post } from './testHub.js';

/** A hub in the race, and how a SIGHUP reaches it (in process, or a signal to its process). */
export interface RacedHub {
  url: string;
  sighup(): Promise<unknown>;
}

export interface Written {
  name: string;
  key: string;
}

export interface RaceOutcome {
  /** The credentials whose write answered 200. */
  acknowledged: Written[];
  /** The writes and reloads that did not answer 200. */
  refused: string[];
  /** The acknowledged keys refused right after their 200. */
  notServed: string[];
}

/** Whether `hub` accepts `key` now (the status of CheckAccess). */
export const checkAccess = async (hub: { url: string }, key: string) =>
  (await get(hub, 'consumer/CheckAccess', { SentinelName: 'Consumer', PackageName: 'Race', AccessKey: key })).status;

/** One round: `writers` clients per hub each add `writes` credentials while the reload loops run beside them. */
export async function raceWritesAndReloads(
  hubs: RacedHub[],
  round: number,
  { writers, writes }: { writers: number; writes: number },
): Promise<RaceOutcome> {
  const outcome: RaceOutcome = { acknowledged: [], refused: [], notServed: [] };
  let writing = true;
  const writeLoops = hubs.flatMap((hub, p) =>
    Array.from({ length: writers }, async (_, w) => {
      for (let i = 0; i < writes; i++) {
        const written = { name: `r${round}p${p}w${w}_${i}`, key: `race-key-${round}-${p}-${w}-${i}` };
        const reply = await post(hub, 'management/credentials', admin, { Name: written.name, AccessKey: written.key });
        if (reply.status !== 200) {
          outcome.refused.push(`${written.name}: ${reply.status} ${reply.text}`);
          continue;
        }
        outcome.acknowledged.push(written);
        // Served at once: whatever runs beside it, nothing may put back a configuration without it.
        const check = await checkAccess(hub, written.key);
        if (check !== 200) outcome.notServed.push(`${written.name} → ${check} just after its 200`);
      }
    }),
  );
  const reloadLoops = hubs.flatMap((hub) => [
    (async () => {
      while (writing) {
        const reply = await get(hub, 'management/configuration/reload', admin);
        if (reply.status !== 200) outcome.refused.push(`reload: ${reply.status} ${reply.text}`);
      }
    })(),
    (async () => {
      while (writing) await hub.sighup();
    })(),
  ]);
  await Promise.all(writeLoops);
  writing = false;
  await Promise.all(reloadLoops);
  return outcome;
}
