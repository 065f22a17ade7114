/**
 * Name filters SQLite's GLOB would backtrack on (`*Temp`, `a*b`, several stars) are narrowed in SQL and
 * matched in memory (store/sqlite/glob.ts, narrowGlob): requests, subscriptions and purges must answer exactly what
 * a correct glob gives, including names holding `[`, `?`, `*`, `]` and non-ASCII text literally.
 */
import { describe, expect, it } from 'vitest';
import { narrowGlob, toGlob } from '../src/store/sqlite/glob.js';
import type { StateObjectUpdateRecord } from '../src/hub/records.js';
import { call, consumer, get, idOf, pkg, hubsStoppedAfterEach } from './support/testHub.js';
import { waitingPolls } from './support/waitingPolls.js';
import type { TestHub } from './support/testHub.js';

const hub = hubsStoppedAfterEach();
const p1 = pkg('S1', 'P1');
const app = consumer();

const NAMES = [
  'Temp',
  'Temperature',
  'RoomTemp',
  'TempTemp',
  'aTemp',
  'Tem',
  'emp',
  'ab',
  'aab',
  'abb',
  'ba',
  'a',
  'b',
  'aXbYb',
  'abXab',
  'ab*ab',
  'a*b',
  'a?b',
  'a[b',
  'a[b]c',
  '[a]',
  '?',
  '*',
  '[',
  'Light.Kitchen.On',
  'LightOn',
  'OnLight',
  'Light.Off',
  'x.Light.y.On.z',
  'Ümlaut-é-Temp',
  'é*é',
  '𝄞Temp𝄞',
];

/** The reference: `*` is any run of characters, every other character stands for itself. */
const reference = (pattern: string) => {
  const source = pattern
    .split('*')
    .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[\\s\\S]*');
  const regex = new RegExp(`^${source}$`, 'u');
  return NAMES.filter((n) => regex.test(n)).sort();
};

const FILTERS = [
  '*Temp',
  '*Temp*',
  'T*p',
  'Temp*Temp',
  '*e*p',
  'a*b',
  '*a*b*',
  'a*b*',
  'ab*ab',
  'ab*ba',
  'a**b',
  '*?*',
  '*[*',
  'a[*]*',
  '*[b]*',
  'a?*',
  '*]',
  '**',
  '*Light*On*',
  'Light*On',
  '*é*',
  '*𝄞',
  '𝄞*𝄞',
  '*.*.*',
  'a*',
];

async function pushAll(h: TestHub) {
  for (const name of NAMES) {
    expect((await get(h, 'platform/PushStateObject', p1, { name, value: '1' })).status).toBe(204);
  }
}

describe('filters matched in memory', () => {
  it('narrows complex filters to a literal prefix with SQL checks, and leaves simple ones to SQLite', () => {
    expect(narrowGlob('Temp*').matches).toBeUndefined();
    expect(narrowGlob('*').matches).toBeUndefined();
    expect(narrowGlob('Temp').matches).toBeUndefined();
    expect(narrowGlob(toGlob('a[?*')).matches).toBeUndefined();
    const hostile = narrowGlob(`${'a'.repeat(200)}*${'a'.repeat(31)}b`);
    expect(hostile).toMatchObject({ glob: `${'a'.repeat(200)}*`, suffix: `${'a'.repeat(31)}b`, middle: '' });
    expect(narrowGlob(toGlob('x[?*ab*abc*?]'))).toMatchObject({ glob: 'x[[][?]*', suffix: '?]', middle: 'abc' });
    expect(narrowGlob(toGlob('x[?*ab*abc*?]')).matches?.('x[?abcab?]')).toBe(false);
    expect(narrowGlob(toGlob('x[?*ab*abc*?]')).matches?.('x[?ababc?]')).toBe(true);
  });

  it('RequestStateObjects answers exactly what a correct glob matches', async () => {
    const h = await hub();
    await pushAll(h);
    for (const filter of FILTERS) {
      const reply = await get(h, 'consumer/RequestStateObjects', app, { name: filter });
      expect(reply.status, filter).toBe(200);
      const names = reply
        .json<{ Name: string }[]>()
        .map((o) => o.Name)
        .sort();
      expect(names, filter).toEqual(reference(filter));
    }
  });

  it("a subscription's first poll and its later changes follow the same rule", async () => {
    const h = await hub();
    await pushAll(h);
    const ids = new Map<string, string>();
    for (const filter of FILTERS) {
      ids.set(
        filter,
        idOf(await get(h, 'consumer/SubscribeToStateObjects', consumer(`W${ids.size}`), { name: filter })),
      );
    }
    const poll = async (filter: string, i: number) => {
      const reply = await get(h, 'consumer/GetStateObjects', consumer(`W${i}`), {
        subscriptionId: ids.get(filter) ?? '',
        timeout: 0,
      });
      expect(reply.status, filter).toBe(200);
      return reply
        .json<StateObjectUpdateRecord[]>()
        .map((u) => u.StateObject.Name)
        .sort();
    };
    for (const [i, filter] of FILTERS.entries()) expect(await poll(filter, i), filter).toEqual(reference(filter));
    // Pushed again: each subscription reads its own matches once more, nothing else.
    await pushAll(h);
    for (const [i, filter] of FILTERS.entries()) expect(await poll(filter, i), filter).toEqual(reference(filter));
  });

  it('a waiting poll is woken by a push its filter matches, `?`, `[` and `]` standing for themselves', async () => {
    // The store gives the notifier the filters back as the `*` patterns they were given: a GLOB escape
    // undone twice (`x[?]*` read as `x?*`) would leave this poll asleep until its timeout, answering [].
    const h = await hub();
    for (const [i, [filter, name]] of [
      ['x[?]*', 'x[?]y'],
      ['*a?b', 'Za?b'],
      ['[*]', '[ok]'],
    ].entries()) {
      const watcher = consumer(`Waker${i}`);
      const id = idOf(await get(h, 'consumer/SubscribeToStateObjects', watcher, { name: filter }));
      expect((await get(h, 'consumer/GetStateObjects', watcher, { subscriptionId: id, timeout: 0 })).text, filter).toBe(
        '[]',
      );
      const waiting = call(h, 'GET', 'consumer/GetStateObjects', watcher, {
        query: { subscriptionId: id, timeout: 20_000 },
      });
      await waitingPolls(h, 1);
      expect((await get(h, 'platform/PushStateObject', p1, { name, value: i })).status).toBe(204);
      const woken = await waiting;
      expect(
        woken.json<StateObjectUpdateRecord[]>().map((u) => u.StateObject.Name),
        filter,
      ).toEqual([name]);
    }
  });

  it('PurgeStateObjects removes exactly what a correct glob matches', async () => {
    for (const filter of ['*Temp', 'a*b', '*[*', '*?*', 'ab*ab', '*é*']) {
      const h = await hub();
      await pushAll(h);
      expect((await get(h, 'platform/PurgeStateObjects', p1, { name: filter })).status, filter).toBe(204);
      const left = (await get(h, 'consumer/RequestStateObjects', app))
        .json<{ Name: string }[]>()
        .map((o) => o.Name)
        .sort();
      const purged = new Set(reference(filter));
      expect(left, filter).toEqual(NAMES.filter((n) => !purged.has(n)).sort());
      await h.stop();
    }
  });
});
