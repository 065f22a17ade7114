/**
 * Three hub processes on one PostgreSQL database behind nginx (deploy/nginx.conf, round-robin, no
 * affinity): every request of these tests goes through nginx, so each may land on any process, and
 * each test is arranged so that it holds whichever process the requests land on.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageRecord, StateObjectUpdateRecord } from '../src/hub/records.js';
import { consumer, get, idOf, pkg } from './support/testHub.js';
import { nginxAvailable, startNginxHubs } from './support/nginxHubs.js';
import type { NginxHubs } from './support/nginxHubs.js';
import { postgresServer, testDatabase } from './support/postgres.js';
import type { TestDatabase } from './support/postgres.js';
import { waitingPollCount } from './support/waitingPolls.js';

const server = await postgresServer();
const runs = server.available && nginxAvailable();

describe.skipIf(!runs)('three hub processes behind nginx', () => {
  let database: TestDatabase;
  let cluster: NginxHubs;

  beforeAll(async () => {
    database = await testDatabase(server);
    cluster = await startNginxHubs(database.url, 3);
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
    await database?.drop();
  });

  /** Which processes hold a waiting poll right now (from each one's /metrics, not through nginx). */
  const waitingOn = async () => Promise.all(cluster.hubs.map((h) => waitingPollCount(h)));
  const untilWaiting = async (total: number) => {
    for (let i = 0; i < 250; i++) {
      const counts = await waitingOn();
      if (counts.reduce((a, b) => a + b, 0) === total) return counts;
      await sleep(20);
    }
    throw new Error(`never ${total} waiting polls: ${String(await waitingOn())}`);
  };

  it('nginx spreads requests over every process (round-robin)', async () => {
    const app = consumer('Spread');
    // Three polls at once, each waits: round-robin puts one on each process.
    const ids = await Promise.all(
      [0, 1, 2].map(async () => idOf(await get(cluster, 'consumer/SubscribeToStateObjects', app, { name: 'Nobody*' }))),
    );
    const polls = ids.map((id) =>
      get(cluster, 'consumer/GetStateObjects', app, { subscriptionId: id, timeout: 1_000 }),
    );
    expect(await untilWaiting(3)).toEqual([1, 1, 1]);
    for (const reply of await Promise.all(polls)) expect(reply.status).toBe(200);
  });

  it('polls waiting on every process are answered by one push through nginx, whichever process takes it', async () => {
    const app = consumer('Watchers');
    const ids = await Promise.all(
      [0, 1, 2].map(async () =>
        idOf(
          await get(cluster, 'consumer/SubscribeToStateObjects', app, { sentinel: 'S1', package: 'P1', name: 'Door' }),
        ),
      ),
    );
    for (const id of ids)
      expect((await get(cluster, 'consumer/GetStateObjects', app, { subscriptionId: id, timeout: 0 })).status).toBe(
        200,
      );
    const polls = ids.map((id) =>
      get(cluster, 'consumer/GetStateObjects', app, { subscriptionId: id, timeout: 60_000 }),
    );
    // One on each process: whichever takes the push, two polls wait on another process.
    expect(await untilWaiting(3)).toEqual([1, 1, 1]);
    expect(
      (await get(cluster, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'Door', value: 'open' })).status,
    ).toBe(204);
    for (const reply of await Promise.all(polls)) {
      expect(reply.status).toBe(200);
      expect(reply.json<StateObjectUpdateRecord[]>().map((u) => [u.StateObject.Name, u.StateObject.Value])).toEqual([
        ['Door', 'open'],
      ]);
    }
  });

  it('a send through nginx reaches every message subscription, each polled through nginx', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++)
      ids.push(idOf(await get(cluster, 'consumer/SubscribeToMessage', consumer(`Listener${i}`))));
    const polls = ids.map((id, i) =>
      get(cluster, 'consumer/GetMessages', consumer(`Listener${i}`), { subscriptionId: id, timeout: 60_000 }),
    );
    expect(await untilWaiting(6)).toEqual([2, 2, 2]);
    expect(
      (
        await get(cluster, 'consumer/SendMessage', consumer('Sender'), {
          scope: 'All',
          key: 'Hello',
          data: JSON.stringify('everyone'),
        })
      ).status,
    ).toBe(204);
    for (const reply of await Promise.all(polls))
      expect(reply.json<MessageRecord[]>().map((m) => m.Data)).toEqual(['everyone']);
  });

  it('a StateObject never goes backwards per key for a subscription whose polls land on every process in turn', async () => {
    const app = consumer('Ordered');
    const id = idOf(
      await get(cluster, 'consumer/SubscribeToStateObjects', app, { sentinel: 'S1', package: 'P1', name: 'Seq*' }),
    );
    const keys = ['SeqA', 'SeqB', 'SeqC'];
    let pushing = true;
    const pushed = new Map<string, number>();
    const pushers = keys.map(async (key) => {
      for (let value = 1; pushing; value++) {
        expect((await get(cluster, 'platform/PushStateObject', pkg('S1', 'P1'), { name: key, value })).status).toBe(
          204,
        );
        pushed.set(key, value);
      }
    });
    const seen = new Map<string, number>();
    let polls = 0;
    for (; polls < 60; polls++) {
      const reply = await get(cluster, 'consumer/GetStateObjects', app, { subscriptionId: id, timeout: 5_000 });
      expect(reply.status).toBe(200);
      for (const u of reply.json<StateObjectUpdateRecord[]>()) {
        const value = u.StateObject.Value as number;
        expect(value, `${u.StateObject.Name} went back`).toBeGreaterThan(seen.get(u.StateObject.Name) ?? 0);
        seen.set(u.StateObject.Name, value);
      }
    }
    pushing = false;
    await Promise.all(pushers);
    // And the last value of each key arrives.
    for (;;) {
      const reply = await get(cluster, 'consumer/GetStateObjects', app, { subscriptionId: id, timeout: 2_000 });
      const updates = reply.json<StateObjectUpdateRecord[]>();
      for (const u of updates) {
        expect(u.StateObject.Value as number).toBeGreaterThan(seen.get(u.StateObject.Name) ?? 0);
        seen.set(u.StateObject.Name, u.StateObject.Value as number);
      }
      if (keys.every((k) => seen.get(k) === pushed.get(k))) break;
      expect(
        updates.length,
        `last values never arrived: seen ${JSON.stringify([...seen])}, pushed ${JSON.stringify([...pushed])}`,
      ).toBeGreaterThan(0);
    }
  });
});
