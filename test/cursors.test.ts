/**
 * StateObjects and messages are logs read through cursors: these pin down what a cursor guarantees
 * (order, coalescing, a new filter's first poll, a purge seen once, group joins from the moment of
 * joining, retention overflow counted, the per-credential subscription limit), also once someone
 * gathered statistics on the file.
 */
import Sqlite from 'better-sqlite3';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
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
import { until } from './support/until.js';

const hub = hubsStoppedAfterEach();
const p1 = pkg('S1', 'P1');
const app = consumer();

const push = (h: TestHub, name: string, value: number) => get(h, 'platform/PushStateObject', p1, { name, value });
const subscribe = (h: TestHub, query: Record<string, string> = {}) => subscribeToStateObjects(h, app, query);
const poll = async (h: TestHub, id: string, query: Record<string, string | number> = {}) =>
  namesAndValues(await pollStateObjects(h, app, id, query));
const messagesOf = async (h: TestHub, id: string) => dataOf(await pollMessages(h, app, id));

describe('StateObject cursors', () => {
  it('with limit=1 walks through the changes oldest first, each object once with its latest value', async () => {
    const h = await hub();
    const id = await subscribe(h, { name: '*' });
    expect(await poll(h, id)).toEqual([]);
    await push(h, 'A', 1);
    await push(h, 'B', 1);
    await push(h, 'C', 1);
    await push(h, 'A', 2);
    expect(await poll(h, id, { limit: 1 })).toEqual([['B', 1]]);
    expect(await poll(h, id, { limit: 1 })).toEqual([['C', 1]]);
    expect(await poll(h, id, { limit: 1 })).toEqual([['A', 2]]);
    expect(await poll(h, id, { limit: 1 })).toEqual([]);
  });

  it('gives an object matched by two filters of one subscription once', async () => {
    const h = await hub();
    const id = await subscribe(h, { name: 'Temp*' });
    await get(h, 'consumer/SubscribeToStateObjects', app, { subscriptionId: id, name: '*Kitchen' });
    expect(await poll(h, id)).toEqual([]);
    await push(h, 'TempKitchen', 21);
    await push(h, 'TempHall', 19);
    expect(await poll(h, id)).toEqual([
      ['TempKitchen', 21],
      ['TempHall', 19],
    ]);
  });

  it('applies the sentinel, package and type filters on every kind of name filter (exact, *, prefix)', async () => {
    const h = await hub();
    const p2 = pkg('S1', 'P2');
    const ids = {
      exact: await subscribe(h, { name: 'T1', package: 'P1' }),
      any: await subscribe(h, { name: '*', package: 'P2' }),
      prefix: await subscribe(h, { name: 'T*', type: 'System.String' }),
      none: await subscribe(h, { name: '*', sentinel: 'S2' }),
    };
    for (const id of Object.values(ids)) expect(await poll(h, id)).toEqual([]);
    await push(h, 'T1', 1);
    expect((await get(h, 'platform/PushStateObject', p2, { name: 'T1', value: 2 })).status).toBe(204);
    await get(h, 'platform/PushStateObject', p2, { name: 'T2', value: '"text"' });
    expect(await poll(h, ids.exact)).toEqual([['T1', 1]]);
    expect(await poll(h, ids.any)).toEqual([
      ['T1', 2],
      ['T2', 'text'],
    ]);
    expect(await poll(h, ids.prefix)).toEqual([['T2', 'text']]);
    expect(await poll(h, ids.none)).toEqual([]);
  });

  it("answers a new filter's first poll with the current objects it matches, and nothing the subscription saw", async () => {
    const h = await hub();
    await push(h, 'X', 1);
    await push(h, 'Y', 2);
    const id = await subscribe(h, { name: 'X' });
    expect(await poll(h, id)).toEqual([['X', 1]]);
    await get(h, 'consumer/SubscribeToStateObjects', app, { subscriptionId: id, name: 'Y' });
    expect(await poll(h, id)).toEqual([['Y', 2]]);
    expect(await poll(h, id)).toEqual([]);
  });

  it('tells a subscriber of a purge once; a later subscription does not see the tombstone', async () => {
    const h = await hub();
    const id = await subscribe(h, { name: '*' });
    await push(h, 'Gone', 1);
    expect(await poll(h, id)).toEqual([['Gone', 1]]);
    expect((await get(h, 'platform/PurgeStateObjects', p1, { name: 'Gone' })).status).toBe(204);
    expect(await poll(h, id)).toEqual([['Gone', 'deleted']]);
    expect(await poll(h, id)).toEqual([]);
    const later = await subscribe(h, { name: '*' });
    expect(await poll(h, later)).toEqual([]);
    // Pushed again, it is news again.
    await push(h, 'Gone', 2);
    expect(await poll(h, id)).toEqual([['Gone', 2]]);
  });

  it('removes a tombstone once every cursor has passed it and no delivery may read it again', async () => {
    const h = await hub({ options: { sweepIntervalMs: 50 } });
    const id = await subscribe(h, { name: '*' });
    await push(h, 'T', 1);
    await get(h, 'platform/PurgeStateObjects', p1, { name: 'T' });
    const reader = new Sqlite(path.join(h.dataDir, 'hub.db'), { readonly: true });
    const tombstones = () =>
      (reader.prepare('select count(*) as n from state_objects where is_deleted = 1').get() as { n: number }).n;
    try {
      await sleep(200);
      expect(tombstones()).toBe(1);
      expect(await poll(h, id)).toEqual([['T', 'deleted']]);
      // Written, that answer's delivery stays pending until the next poll (hub/polls/deliveries.ts): a crash
      // before it reads the tombstone again.
      await sleep(200);
      expect(tombstones()).toBe(1);
      expect(await poll(h, id)).toEqual([]);
      await until(() => tombstones() === 0);
    } finally {
      reader.close();
    }
  });
});

describe('message cursors', () => {
  it('delivers a group message only to members that had joined when it was sent', async () => {
    const h = await hub();
    const id = idOf(await get(h, 'consumer/SubscribeToMessage', app));
    await get(h, 'platform/SendMessage', p1, { scope: 'Group', args: 'Kitchen', key: 'K', data: '1' });
    await get(h, 'consumer/SubscribeToMessageGroup', app, { group: 'Kitchen', subscriptionId: id });
    await get(h, 'platform/SendMessage', p1, { scope: 'Group', args: 'Kitchen', key: 'K', data: '2' });
    expect(await messagesOf(h, id)).toEqual([2]);
  });

  it('does not give a new subscription what was sent before it existed', async () => {
    const h = await hub();
    await get(h, 'platform/SendMessage', p1, { scope: 'All', key: 'K', data: '1' });
    const id = idOf(await get(h, 'consumer/SubscribeToMessage', app));
    await get(h, 'platform/SendMessage', p1, { scope: 'All', key: 'K', data: '2' });
    expect(await messagesOf(h, id)).toEqual([2]);
  });

  it('counts what a subscription missed when it fell behind the retention (metric)', async () => {
    const h = await hub({ options: { messageQueueLimit: 3 } });
    const id = idOf(await get(h, 'consumer/SubscribeToMessage', app));
    for (let i = 1; i <= 5; i++)
      await get(h, 'platform/SendMessage', p1, { scope: 'Package', args: 'Consumer/App', key: 'N', data: String(i) });
    expect(await messagesOf(h, id)).toEqual([3, 4, 5]);
    const metrics = await metricsText(h);
    expect(metrics).toMatch(/hub_dropped_messages_total 2\b/);
  });
});

describe('subscriptions per credential', () => {
  it('refuses a credential more subscriptions than allowed with a JSON 429, and lets it reuse its own', async () => {
    const h = await hub({ options: { maxSubscriptionsPerCredential: 2 } });
    const first = idOf(await get(h, 'consumer/SubscribeToMessage', consumer('A')));
    idOf(await get(h, 'consumer/SubscribeToStateObjects', consumer('B')));
    const third = await get(h, 'consumer/SubscribeToMessage', consumer('C'));
    expect(third.status).toBe(429);
    expect(third.json<{ Message: string }>().Message).toMatch(/2 subscriptions/);
    expect(idOf(await get(h, 'consumer/SubscribeToMessage', consumer('A'), { subscriptionId: first }))).toBe(first);
    expect((await get(h, 'platform/SubscribeToMessage', pkg('S2', 'P1', 'other-key-0001'))).status).toBe(200);
  });
});

describe('statistics someone gathered on the file', () => {
  it('change no answer: after ANALYZE while the hub runs, and after a restart on that file, every kind of filter and the messages read on', async () => {
    let h = await hub();
    const ids = {
      usual: await subscribe(h, { name: 'A' }),
      exact: await subscribe(h, { name: 'A', package: 'P1' }),
      prefix: await subscribe(h, { name: 'T*' }),
      narrowed: await subscribe(h, { name: '*T*1', package: 'P1' }),
      any: await subscribe(h, { name: '*', package: 'P1' }),
    };
    const all = idOf(await get(h, 'consumer/SubscribeToMessage', app));
    const kitchen = idOf(await get(h, 'consumer/SubscribeToMessage', app));
    await get(h, 'consumer/SubscribeToMessageGroup', app, { group: 'Kitchen', subscriptionId: kitchen });
    // Rows for the statistics to sample: none of them matches a filter above.
    const p2 = pkg('S1', 'P2');
    for (let i = 0; i < 40; i++) await get(h, 'platform/PushStateObject', p2, { name: `F${i}`, value: i });
    for (const id of Object.values(ids)) expect(await poll(h, id)).toEqual([]);

    /** One change of each kind, each read once by whoever listens for it; the usual filter's poll woken by it. */
    const changes = async (value: number) => {
      const woken = poll(h, ids.usual, { timeout: 30_000 });
      await waitingPolls(h, 1);
      await push(h, 'A', value);
      expect(await woken).toEqual([['A', value]]);
      await push(h, 'T1', value);
      await get(h, 'platform/SendMessage', p1, { scope: 'All', key: 'K', data: String(value) });
      await get(h, 'platform/SendMessage', p1, { scope: 'Group', args: 'Kitchen', key: 'K', data: String(-value) });
      expect(await poll(h, ids.exact)).toEqual([['A', value]]);
      expect(await poll(h, ids.prefix)).toEqual([['T1', value]]);
      expect(await poll(h, ids.narrowed)).toEqual([['T1', value]]);
      expect(await poll(h, ids.any)).toEqual([
        ['A', value],
        ['T1', value],
      ]);
      expect(await messagesOf(h, all)).toEqual([value]);
      expect(await messagesOf(h, kitchen)).toEqual([value, -value]);
      for (const id of Object.values(ids)) expect(await poll(h, id)).toEqual([]);
      expect(await messagesOf(h, all)).toEqual([]);
    };
    await changes(1);

    // As someone with the sqlite3 CLI would, while the hub runs.
    const cli = new Sqlite(path.join(h.dataDir, 'hub.db'));
    try {
      cli.exec('analyze');
      expect((cli.prepare('select count(*) as n from sqlite_stat4').get() as { n: number }).n).toBeGreaterThan(0);
    } finally {
      cli.close();
    }
    await changes(2);
    // A new start prepares every statement with the statistics loaded.
    await h.stop();
    h = await hub({ dataDir: h.dataDir });
    await changes(3);
  });
});
