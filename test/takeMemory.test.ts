/**
 * A take on SQLite answered from memory (src/store/sqlite/takes/takeMemory.ts, messageMemory.ts): a woken
 * poll of the usual StateObject subscription, or of a message subscription, takes without reading the
 * file, and gets what the file would have given. The
 * suite runs with HUB_TEST_VERIFY_TAKES=1, so each such take here (and everywhere else) also reads the
 * file and fails on any difference; these tests make memory answer, or not, where it must.
 */
import { describe, expect, it } from 'vitest';
import { MAX_PUSHES } from '../src/store/sqlite/takes/takeMemory.js';
import { takesFromMemory } from '../src/store/sqlite/takes/verifyTakes.js';
import type { TestHub } from './support/testHub.js';
import { consumer, get, hubsStoppedAfterEach, idOf, pkg } from './support/testHub.js';
import {
  dataOf,
  namesAndValues,
  pollMessages,
  pollStateObjects,
  subscribeToStateObjects,
} from './support/subscriptions.js';
import { metricsText, waitingPolls } from './support/waitingPolls.js';

const hub = hubsStoppedAfterEach();
const p1 = pkg('S1', 'P1');
const app = consumer();

const push = async (h: TestHub, name: string, value: number, who = p1) =>
  expect((await get(h, 'platform/PushStateObject', who, { name, value })).status).toBe(204);
const subscribe = (h: TestHub, query: Record<string, string> = {}) => subscribeToStateObjects(h, app, query);
const poll = async (h: TestHub, id: string, query: Record<string, string | number> = {}) =>
  namesAndValues(await pollStateObjects(h, app, id, query));

/** What `read` answers, and how many takes memory answered meanwhile. */
async function counted<T>(read: () => Promise<T>): Promise<{ answer: T; fromMemory: number }> {
  const before = takesFromMemory();
  const answer = await read();
  return { answer, fromMemory: takesFromMemory() - before };
}

/** A poll that waits, answered once `then` has run; how many takes memory answered once it waited. */
async function woken(h: TestHub, id: string, then: () => Promise<void>) {
  const answer = poll(h, id, { timeout: 30_000 });
  await waitingPolls(h, 1);
  return counted(async () => {
    await then();
    return answer;
  });
}

describe('a StateObject take from memory', () => {
  it('answers a woken poll of the usual subscription, and a later poll, with the latest values the file holds', async () => {
    const h = await hub();
    const id = await subscribe(h, { name: 'T' });
    expect(await poll(h, id)).toEqual([]);
    expect(await woken(h, id, () => push(h, 'T', 1))).toEqual({ answer: [['T', 1]], fromMemory: 1 });
    expect(await poll(h, id)).toEqual([]);
    // Pushed twice by one producer, once by another, and something it does not listen for.
    await push(h, 'T', 2);
    await push(h, 'U', 1);
    await push(h, 'T', 3);
    await push(h, 'T', 4, pkg('S1', 'P2'));
    expect(await counted(() => poll(h, id))).toEqual({
      answer: [
        ['T', 3],
        ['T', 4],
      ],
      fromMemory: 1,
    });
    expect(await poll(h, id)).toEqual([]);
  });

  it('reads the file once the subscription has a filter other than the usual one, or a new filter', async () => {
    const h = await hub();
    const id = await subscribe(h, { name: 'T' });
    expect(await poll(h, id)).toEqual([]);
    await push(h, 'U', 5);
    // A new filter's first poll brings the current values it matches: memory knew only T.
    await get(h, 'consumer/SubscribeToStateObjects', app, { subscriptionId: id, name: 'U' });
    expect(await counted(() => poll(h, id))).toEqual({ answer: [['U', 5]], fromMemory: 0 });
    // Both usual: memory answers again.
    expect(await woken(h, id, () => push(h, 'U', 6))).toEqual({ answer: [['U', 6]], fromMemory: 1 });
    expect(await poll(h, id)).toEqual([]);
    await get(h, 'consumer/SubscribeToStateObjects', app, { subscriptionId: id, name: 'V*' });
    expect(await poll(h, id)).toEqual([]);
    expect(await woken(h, id, () => push(h, 'V1', 1))).toEqual({ answer: [['V1', 1]], fromMemory: 0 });
  });

  it('reads the file after a purge, then answers from memory again', async () => {
    const h = await hub();
    const id = await subscribe(h, { name: 'T' });
    await push(h, 'T', 1);
    expect(await poll(h, id)).toEqual([['T', 1]]);
    expect(await poll(h, id)).toEqual([]);
    const purged = await woken(h, id, async () => {
      expect((await get(h, 'platform/PurgeStateObjects', p1, { name: 'T' })).status).toBe(204);
    });
    expect(purged).toEqual({ answer: [['T', 'deleted']], fromMemory: 0 });
    expect(await poll(h, id)).toEqual([]);
    expect(await woken(h, id, () => push(h, 'T', 2))).toEqual({ answer: [['T', 2]], fromMemory: 1 });
  });

  it('walks through with limit=1 from memory, oldest change first', async () => {
    const h = await hub();
    const id = await subscribe(h, { name: 'T' });
    await get(h, 'consumer/SubscribeToStateObjects', app, { subscriptionId: id, name: 'U' });
    expect(await poll(h, id)).toEqual([]);
    await push(h, 'T', 1);
    await push(h, 'U', 1);
    await push(h, 'T', 2);
    expect(await counted(() => poll(h, id, { limit: 1 }))).toEqual({ answer: [['U', 1]], fromMemory: 1 });
    expect(await poll(h, id, { limit: 1 })).toEqual([['T', 2]]);
    expect(await poll(h, id)).toEqual([]);
  });

  it('reads the file when more was pushed than memory keeps since the subscription last read', async () => {
    const h = await hub();
    const id = await subscribe(h, { name: 'T' });
    expect(await poll(h, id)).toEqual([]);
    for (let i = 0; i <= MAX_PUSHES; i++) await push(h, `X${i}`, i);
    await push(h, 'T', 1);
    expect(await counted(() => poll(h, id))).toEqual({ answer: [['T', 1]], fromMemory: 0 });
    expect(await poll(h, id)).toEqual([]);
    expect(await woken(h, id, () => push(h, 'T', 2))).toEqual({ answer: [['T', 2]], fromMemory: 1 });
  });

  it('starts empty after a restart on the same file, and reads on where the cursor was', async () => {
    let h = await hub();
    const id = await subscribe(h, { name: 'T' });
    expect(await poll(h, id)).toEqual([]);
    await push(h, 'T', 1);
    await h.stop();
    h = await hub({ dataDir: h.dataDir });
    expect(await counted(() => poll(h, id))).toEqual({ answer: [['T', 1]], fromMemory: 0 });
    expect(await poll(h, id)).toEqual([]);
    expect(await woken(h, id, () => push(h, 'T', 2))).toEqual({ answer: [['T', 2]], fromMemory: 1 });
  });
});

describe('a message take from memory', () => {
  const send = async (h: TestHub, scope: string, args: string | undefined, data: number) =>
    expect(
      (await get(h, 'platform/SendMessage', p1, { scope, ...(args ? { args } : {}), key: 'K', data: String(data) }))
        .status,
    ).toBe(204);
  const messagesOf = async (h: TestHub, id: string, query: Record<string, string | number> = {}) =>
    dataOf(await pollMessages(h, app, id, query));

  it('reads what a send added from memory, and keeps only what is addressed to the subscription', async () => {
    const h = await hub();
    const id = idOf(await get(h, 'consumer/SubscribeToMessage', app));
    await get(h, 'consumer/SubscribeToMessageGroup', app, { group: 'Kitchen', subscriptionId: id });
    expect(await messagesOf(h, id)).toEqual([]);
    const answer = messagesOf(h, id, { timeout: 30_000 });
    await waitingPolls(h, 1);
    const before = takesFromMemory();
    await send(h, 'All', undefined, 1);
    expect(await answer).toEqual([1]);
    expect(takesFromMemory() - before).toBeGreaterThan(0);
    await send(h, 'Group', 'Kitchen', 2);
    await send(h, 'Group', 'Hall', 3);
    await send(h, 'Package', 'Consumer/App', 4);
    await send(h, 'Package', 'Consumer/Other', 5);
    expect(await counted(() => messagesOf(h, id, { limit: 1 }))).toEqual({ answer: [2], fromMemory: 1 });
    expect(await counted(() => messagesOf(h, id))).toEqual({ answer: [4], fromMemory: 1 });
    expect(await messagesOf(h, id)).toEqual([]);
  });

  it('reads the file for a subscription behind what the log kept, and tells what it missed', async () => {
    const h = await hub({ options: { messageQueueLimit: 3 } });
    const id = idOf(await get(h, 'consumer/SubscribeToMessage', app));
    for (let i = 1; i <= 5; i++) await send(h, 'All', undefined, i);
    expect(await counted(() => messagesOf(h, id))).toEqual({ answer: [3, 4, 5], fromMemory: 0 });
    expect(await metricsText(h)).toMatch(/hub_dropped_messages_total 2\b/);
    await send(h, 'All', undefined, 6);
    expect(await counted(() => messagesOf(h, id))).toEqual({ answer: [6], fromMemory: 1 });
  });

  it('starts empty after a restart on the same file, and reads on where the cursor was', async () => {
    let h = await hub();
    const id = idOf(await get(h, 'consumer/SubscribeToMessage', app));
    await send(h, 'All', undefined, 1);
    await h.stop();
    h = await hub({ dataDir: h.dataDir });
    expect(await counted(() => messagesOf(h, id))).toEqual({ answer: [1], fromMemory: 0 });
    await send(h, 'All', undefined, 2);
    expect(await counted(() => messagesOf(h, id))).toEqual({ answer: [2], fromMemory: 1 });
  });
});
