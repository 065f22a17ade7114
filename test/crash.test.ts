/**
 * Kill -9 at a random moment under concurrent writes, restart on the same directory, and check that
 * everything acknowledged is there: StateObjects at their last acknowledged value (or a later one),
 * every acknowledged message delivered exactly once, and an intact database. HUB_CRASH_CYCLES sets
 * the number of cycles (5 in `npm test`, 50 in `npm run test:crash`).
 */
import Database from 'better-sqlite3';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { MessageRecord, StateObjectUpdateRecord } from '../src/hub/records.js';
import type { CliProcess } from './support/hubCli.js';
import { startHubProcess } from './support/hubCli.js';
import { consumer, get, pkg, tempDir } from './support/testHub.js';

const CYCLES = Number(process.env.HUB_CRASH_CYCLES ?? 5);
const SUBSCRIPTION = '6b1d8a4e-1c7e-4f57-9d53-0c8f3b2a7e11';
/** A StateObject subscription nobody polls while the load runs: it is behind at every kill. */
const OBJECT_SUBSCRIPTION = '0e5a3c1d-7b2f-4c9e-8a41-5d6f7e8a9b10';
const PUSHERS = 4;
const SENDERS = 2;

async function kill9(hub: CliProcess): Promise<void> {
  hub.proc.kill('SIGKILL');
  await hub.exited;
}

describe('crash safety', () => {
  it(
    `keeps everything acknowledged across ${CYCLES} kill -9 cycles`,
    async () => {
      const dataDir = tempDir();
      const lastAckedValue = new Map<string, number>();
      const ackedMessages = new Set<string>();
      const received = new Set<string>();
      // Pushes acknowledged since the behind subscription last read: it must get each name at that value or later.
      const unreadAcks = new Map<string, number>();
      const app = consumer('Crash');
      let nextValue = 1;

      // One more start than kills: the last start only checks what the last kill left.
      for (let cycle = 0; cycle <= CYCLES; cycle++) {
        const hub = await startHubProcess(dataDir);

        // What was acknowledged before the last kill must be here now.
        const objects = (await get(hub, 'consumer/RequestStateObjects', app, { sentinel: 'S1', package: 'P1' })).json<
          { Name: string; Value: number }[]
        >();
        const current = new Map(objects.map((o) => [o.Name, o.Value]));
        for (const [name, value] of lastAckedValue) {
          expect(current.get(name), `${name} after cycle ${cycle}`).toBeGreaterThanOrEqual(value);
        }
        expect((await get(hub, 'consumer/SubscribeToMessage', app, { subscriptionId: SUBSCRIPTION })).json()).toBe(
          SUBSCRIPTION,
        );
        for (;;) {
          const batch = (
            await get(hub, 'consumer/GetMessages', app, { subscriptionId: SUBSCRIPTION, timeout: 0 })
          ).json<MessageRecord[]>();
          if (batch.length === 0) break;
          for (const m of batch) {
            const tag = String(m.Data);
            expect(received.has(tag), `message ${tag} delivered twice`).toBe(false);
            received.add(tag);
          }
        }
        for (const tag of ackedMessages) expect(received.has(tag), `acknowledged message ${tag} lost`).toBe(true);
        expect(
          (
            await get(hub, 'consumer/SubscribeToStateObjects', app, { subscriptionId: OBJECT_SUBSCRIPTION, name: 'K*' })
          ).json(),
        ).toBe(OBJECT_SUBSCRIPTION);
        const caughtUp = new Map<string, number>();
        for (;;) {
          const batch = (
            await get(hub, 'consumer/GetStateObjects', app, {
              subscriptionId: OBJECT_SUBSCRIPTION,
              timeout: 0,
              limit: 2,
            })
          ).json<StateObjectUpdateRecord[]>();
          if (batch.length === 0) break;
          for (const u of batch) caughtUp.set(u.StateObject.Name, u.StateObject.Value as number);
        }
        for (const [name, value] of unreadAcks) {
          expect(
            caughtUp.get(name),
            `change of ${name} to ${value} not seen by the behind subscription`,
          ).toBeGreaterThanOrEqual(value);
        }
        unreadAcks.clear();
        if (cycle === CYCLES) {
          await kill9(hub);
          break;
        }

        // Load, then a kill at a random moment.
        let running = true;
        const pushers = Array.from({ length: PUSHERS }, async (_, i) => {
          while (running) {
            const value = nextValue++;
            try {
              const reply = await get(hub, 'platform/PushStateObject', pkg('S1', 'P1'), { name: `K${i}`, value });
              if (reply.status === 204) {
                lastAckedValue.set(`K${i}`, value);
                unreadAcks.set(`K${i}`, value);
              }
            } catch {
              return;
            }
          }
        });
        const senders = Array.from({ length: SENDERS }, async (_, i) => {
          for (let seq = 0; running; seq++) {
            const tag = `${cycle}:${i}:${seq}`;
            try {
              const reply = await get(hub, 'platform/SendMessage', pkg('S1', 'P2'), {
                scope: 'Package',
                args: 'Consumer/Crash',
                key: 'Tick',
                data: JSON.stringify(tag),
              });
              if (reply.status === 204) ackedMessages.add(tag);
            } catch {
              return;
            }
          }
        });
        await sleep(100 + Math.random() * 400);
        await kill9(hub);
        running = false;
        await Promise.all([...pushers, ...senders]);

        const sqlite = new Database(path.join(dataDir, 'hub.db'));
        expect(sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
        sqlite.close();
      }
      console.log(
        `crash test: ${CYCLES} kills, ${nextValue - 1} pushes sent, ${ackedMessages.size} messages acknowledged, ${received.size} delivered`,
      );
      expect(ackedMessages.size).toBeGreaterThan(0);
      expect(lastAckedValue.size).toBe(PUSHERS);
    },
    60_000 + CYCLES * 10_000,
  );
});
