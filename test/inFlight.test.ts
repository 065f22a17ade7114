/**
 * Deliveries whose answer dies in flight (issue 22, hub/polls/deliveries.ts): a hub process killed between a
 * poll's COMMIT and its answer (a real child process, SIGKILLed by the test-only
 * HUB_TEST_DIE_BEFORE_ANSWER hook) loses nothing: the next poll, after a restart on SQLite or on another
 * process on PostgreSQL, gets the same messages and StateObjects again, and then not again. A normal
 * poll-repoll sequence never gets anything twice, even with each re-poll sent to the other of two
 * processes on PostgreSQL right as the answer before it arrives (racing the settling of that answer).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { MessageRecord, StateObjectUpdateRecord } from '../src/hub/records.js';
import { postgresServer, testDatabase } from './support/postgres.js';
import type { TestDatabase } from './support/postgres.js';
import type { CliProcess } from './support/hubCli.js';
import { startHubProcess } from './support/hubCli.js';
import { consumer, get, idOf, pkg, startTestHub, tempDir, hubsOn } from './support/testHub.js';
import type { TestHub } from './support/testHub.js';

const server = await postgresServer();
const app = consumer('Receiver');
const sender = consumer('Sender');

/** A poll whose hub dies before answering: the request fails, and the process is gone. */
async function pollThatKills(hub: CliProcess & { url: string }, action: string, id: string): Promise<void> {
  await expect(get(hub, action, app, { subscriptionId: id, timeout: 0 })).rejects.toThrow();
  await hub.exited;
}

const messagesOf = async (hub: { url: string }, id: string) =>
  (await get(hub, 'consumer/GetMessages', app, { subscriptionId: id, timeout: 0 }))
    .json<MessageRecord[]>()
    .map((m) => m.Data);
const objectsOf = async (hub: { url: string }, id: string) =>
  (await get(hub, 'consumer/GetStateObjects', app, { subscriptionId: id, timeout: 0 }))
    .json<StateObjectUpdateRecord[]>()
    .map((u) => [u.StateObject.Name, u.StateObject.Value]);

/** Sends `data` to All through `hub`. */
async function send(hub: { url: string }, data: string): Promise<void> {
  const reply = await get(hub, 'consumer/SendMessage', sender, { scope: 'All', key: 'K', data: JSON.stringify(data) });
  expect(reply.status).toBe(204);
}

describe('SQLite: a hub killed between a poll’s COMMIT and its answer', () => {
  it('the restarted hub delivers the same messages and StateObjects again, then not again', async () => {
    const dataDir = tempDir();
    const dying = { HUB_TEST_DIE_BEFORE_ANSWER: '1' };
    let hub = await startHubProcess(dataDir, dying);
    const messages = idOf(await get(hub, 'consumer/SubscribeToMessage', app));
    const objects = idOf(await get(hub, 'consumer/SubscribeToStateObjects', app, { sentinel: 'S1', name: '*' }));
    expect(await objectsOf(hub, objects)).toEqual([]);
    for (const data of ['m1', 'm2']) await send(hub, data);
    for (const [name, value] of [
      ['A', 1],
      ['B', 2],
    ] as const) {
      expect((await get(hub, 'platform/PushStateObject', pkg('S1', 'P1'), { name, value })).status).toBe(204);
    }
    await pollThatKills(hub, 'consumer/GetMessages', messages);
    hub = await startHubProcess(dataDir, dying);
    await pollThatKills(hub, 'consumer/GetStateObjects', objects);

    hub = await startHubProcess(dataDir, {});
    expect(await messagesOf(hub, messages)).toEqual(['m1', 'm2']);
    expect(await messagesOf(hub, messages)).toEqual([]);
    expect(await objectsOf(hub, objects)).toEqual([
      ['A', 1],
      ['B', 2],
    ]);
    expect(await objectsOf(hub, objects)).toEqual([]);
    hub.proc.kill('SIGTERM');
  }, 180_000);
});

describe.skipIf(!server.available)('PostgreSQL: two processes on one database', () => {
  let database: TestDatabase | undefined;
  const hubs: TestHub[] = [];
  afterEach(async () => {
    for (const hub of hubs.splice(0)) await hub.stop();
    await database?.drop();
    database = undefined;
  });

  it('a poll-repoll sequence alternating between them gets every message and StateObject once, in order', async () => {
    database = await testDatabase(server);
    const url = database.url;
    hubs.push(...(await hubsOn(url, 2)));
    const [a, b] = hubs;
    const messages = idOf(await get(a, 'consumer/SubscribeToMessage', app));
    const objects = idOf(await get(a, 'consumer/SubscribeToStateObjects', app, { sentinel: 'S1', name: '*' }));
    expect(await objectsOf(b, objects)).toEqual([]);
    const sent = Array.from({ length: 24 }, (_, i) => `m${i}`);
    for (const data of sent) await send(a, data);
    for (let i = 0; i < 24; i++) {
      expect((await get(b, 'platform/PushStateObject', pkg('S1', 'P1'), { name: `O${i}`, value: i })).status).toBe(204);
    }
    const got: unknown[] = [];
    const gotObjects: unknown[] = [];
    // Each re-poll goes to the other process the moment the answer before it arrived.
    for (let turn = 0; got.length < sent.length || gotObjects.length < 24; turn++) {
      const hub = turn % 2 === 0 ? a : b;
      const [m, o] = await Promise.all([
        get(hub, 'consumer/GetMessages', app, { subscriptionId: messages, timeout: 0, limit: 1 }),
        get(hub, 'consumer/GetStateObjects', app, { subscriptionId: objects, timeout: 0, limit: 1 }),
      ]);
      got.push(...m.json<MessageRecord[]>().map((r) => r.Data));
      gotObjects.push(...o.json<StateObjectUpdateRecord[]>().map((u) => u.StateObject.Name));
      expect(turn).toBeLessThan(200);
    }
    expect(got).toEqual(sent);
    expect(gotObjects).toEqual(Array.from({ length: 24 }, (_, i) => `O${i}`));
    expect(await messagesOf(a, messages)).toEqual([]);
    expect(await objectsOf(b, objects)).toEqual([]);
  }, 120_000);

  it('a process killed between a poll’s COMMIT and its answer: the other process delivers the same again, once', async () => {
    database = await testDatabase(server);
    const url = database.url;
    hubs.push(await startTestHub({ options: { databaseUrl: url } }));
    const [b] = hubs;
    const dying = await startHubProcess(tempDir(), { HUB_DATABASE_URL: url, HUB_TEST_DIE_BEFORE_ANSWER: '1' });
    const messages = idOf(await get(b, 'consumer/SubscribeToMessage', app));
    const objects = idOf(await get(b, 'consumer/SubscribeToStateObjects', app, { sentinel: 'S1', name: '*' }));
    expect(await objectsOf(b, objects)).toEqual([]);
    await send(b, 'lost?');
    expect((await get(b, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'A', value: 1 })).status).toBe(204);
    await pollThatKills(dying, 'consumer/GetMessages', messages);
    const again = await startHubProcess(tempDir(), { HUB_DATABASE_URL: url, HUB_TEST_DIE_BEFORE_ANSWER: '1' });
    await pollThatKills(again, 'consumer/GetStateObjects', objects);
    expect(await messagesOf(b, messages)).toEqual(['lost?']);
    expect(await messagesOf(b, messages)).toEqual([]);
    expect(await objectsOf(b, objects)).toEqual([['A', 1]]);
    expect(await objectsOf(b, objects)).toEqual([]);
  }, 180_000);
});
