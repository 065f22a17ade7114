/**
 * HEAD on the REST interfaces. Koa's router answers HEAD with the GET handler and drops the body, so a
 * HEAD GetStateObjects or GetMessages consumed the caller's queued updates and threw them away, and a
 * HEAD PushStateObject or PurgeStateObjects wrote. The actions are not safe, so HEAD on /rest/ is 405
 * (as in Constellation's ASP.NET Web API, which does not map HEAD to GET) and changes nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { call, consumer, get, hubsStoppedAfterEach, idOf, pkg } from './support/testHub.js';
import type { TestHub } from './support/testHub.js';
import type { StoredState } from './support/storedState.js';
import { storedStateOf } from './support/storedState.js';

const hub = hubsStoppedAfterEach();
let h: TestHub;
let stored: StoredState;
beforeEach(async () => {
  h = await hub();
  stored = storedStateOf(h.dataDir);
});
afterEach(() => stored.close());

describe('HEAD on the interfaces', () => {
  it('HEAD GetStateObjects and GetMessages are 405 and leave the queued updates to the next GET', async () => {
    const objects = idOf(await get(h, 'consumer/SubscribeToStateObjects', consumer(), { name: 'Temp' }));
    const messages = idOf(await get(h, 'consumer/SubscribeToMessage', consumer()));
    expect((await get(h, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'Temp', value: 21 })).status).toBe(204);
    expect(
      (await get(h, 'consumer/SendMessage', consumer('Other'), { scope: 'All', key: 'Hello', data: 1 })).status,
    ).toBe(204);
    const before = stored.digest();

    for (const [action, subscriptionId] of [
      ['consumer/GetStateObjects', objects],
      ['consumer/GetMessages', messages],
    ]) {
      const head = await call(h, 'HEAD', action, consumer(), { query: { subscriptionId, timeout: 0 } });
      expect(head.status).toBe(405);
      expect(head.headers.get('allow')).toBe('GET, POST');
    }
    expect(stored.digest()).toBe(before);

    const updates = (
      await get(h, 'consumer/GetStateObjects', consumer(), { subscriptionId: objects, timeout: 0 })
    ).json<{ StateObject: { Value: unknown } }[]>();
    expect(updates.map((u) => u.StateObject.Value)).toEqual([21]);
    const received = (await get(h, 'consumer/GetMessages', consumer(), { subscriptionId: messages, timeout: 0 })).json<
      { Key: string }[]
    >();
    expect(received.map((m) => m.Key)).toEqual(['Hello']);
  });

  it('HEAD on writing actions is 405 and stores nothing, on every interface and for unknown actions too', async () => {
    expect((await get(h, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'Keep', value: 1 })).status).toBe(204);
    const before = stored.digest();
    const writes: [string, Record<string, string | number>][] = [
      ['platform/PushStateObject', { name: 'ByHead', value: 1 }],
      ['constellation/PushStateObject', { name: 'ByHead', value: 1 }],
      ['platform/PurgeStateObjects', { name: 'Keep' }],
      ['platform/WriteLog', { level: 'Info', message: 'by head' }],
      ['platform/SendMessage', { scope: 'All', key: 'ByHead' }],
      ['consumer/SubscribeToMessage', {}],
      ['platform/Nope', {}],
    ];
    for (const [action, query] of writes) {
      const head = await call(h, 'HEAD', action, pkg('S1', 'P1'), { query });
      expect(head.status, action).toBe(405);
      expect(head.text).toBe('');
    }
    expect(stored.digest()).toBe(before);
    // The body of the same refusal, as GET-less clients would see it with another method.
    const put = await call(h, 'PUT', 'platform/PushStateObject', pkg('S1', 'P1'), {
      query: { name: 'ByPut', value: 1 },
    });
    expect(put.status).toBe(405);
    expect(put.json()).toEqual({
      Message: 'The requested resource does not support this HTTP method.',
      Code: 'MethodNotAllowed',
    });
  });

  it('HEAD outside the interfaces keeps working: /health, /ready', async () => {
    for (const path of ['/health', '/ready']) {
      const response = await fetch(`${h.url}${path}`, { method: 'HEAD' });
      expect(response.status, path).toBe(200);
    }
  });
});
