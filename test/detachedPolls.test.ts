/**
 * Long-polls are answered outside Koa once they wait (src/http/detached.ts): the answer must be the one
 * Koa would have sent (status, headers, JSON body, error bodies), counted in the metrics, and a client
 * that left must not lose anything.
 */
import { describe, expect, it } from 'vitest';
import { ADMIN_KEY, call, consumer, get, idOf, pkg, hubsStoppedAfterEach } from './support/testHub.js';

const hub = hubsStoppedAfterEach();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const app = consumer();

async function waitingPolls(h: { url: string }, n: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const text = await (await fetch(`${h.url}/metrics?SentinelName=Management&PackageName=Prom&AccessKey=${ADMIN_KEY}`)).text();
    if (Number(/hub_waiting_long_polls (\d+)/.exec(text)?.[1]) >= n) return;
    await sleep(20);
  }
  throw new Error(`${n} polls never waited`);
}

describe('a waiting long-poll answered outside Koa', () => {
  it('answers a woken poll with the same status, headers and JSON body as an immediate one', async () => {
    const h = await hub();
    const id = idOf(await get(h, 'consumer/SubscribeToStateObjects', app, { name: 'T' }));
    const origin = { Origin: 'http://console.example' };
    const waiting = call(h, 'GET', 'consumer/GetStateObjects', app, { query: { subscriptionId: id, timeout: 10_000 }, headers: origin });
    await waitingPolls(h, 1);
    await get(h, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'T', value: 7 });
    const woken = await waiting;
    expect(woken.status).toBe(200);
    expect(woken.json<{ StateObject: { Name: string; Value: unknown } }[]>().map((u) => [u.StateObject.Name, u.StateObject.Value])).toEqual([['T', 7]]);
    expect(woken.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(woken.headers.get('content-length')).toBe(String(Buffer.byteLength(woken.text)));
    expect(woken.headers.get('access-control-allow-origin')).toBe('*');

    // Without Origin: Vary, and an empty array on a timeout.
    const timedOut = await call(h, 'GET', 'consumer/GetStateObjects', app, { query: { subscriptionId: id, timeout: 1000 } });
    expect(timedOut.status).toBe(200);
    expect(timedOut.text).toBe('[]');
    expect(timedOut.headers.get('vary')).toBe('Origin');
    expect(timedOut.headers.get('content-length')).toBe('2');
  });

  it('answers an error the poll meets after leaving Koa with the hub’s JSON error, counted by status', async () => {
    const h = await hub();
    const unknownId = '00000000-0000-0000-0000-000000000001';
    const lost = await get(h, 'consumer/GetMessages', app, { subscriptionId: unknownId, timeout: 5000 });
    expect(lost.status).toBe(500);
    expect(lost.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(lost.json<{ Message: string }>().Message).toBe(`The subscription '${unknownId}' does not exist or has expired.`);
    // Bad parameters are still answered inside Koa, before anything waits.
    const bad = await get(h, 'consumer/GetMessages', app, { subscriptionId: unknownId, timeout: 'soon' });
    expect(bad.status).toBe(400);
    expect(bad.json<{ Message: string }>().Message).toContain("'timeout'");

    const id = idOf(await get(h, 'consumer/SubscribeToMessage', app));
    const waiting = get(h, 'consumer/GetMessages', app, { subscriptionId: id, timeout: 10_000 });
    await waitingPolls(h, 1);
    await get(h, 'consumer/SendMessage', consumer('Other'), { scope: 'All', key: 'Ping', data: 1 });
    expect((await waiting).status).toBe(200);
    const text = await (await fetch(`${h.url}/metrics?SentinelName=Management&PackageName=Prom&AccessKey=${ADMIN_KEY}`)).text();
    expect(text).toMatch(/hub_http_requests_total\{interface="consumer",action="getmessages",status="500"\} 1\b/);
    expect(text).toMatch(/hub_http_requests_total\{interface="consumer",action="getmessages",status="400"\} 1\b/);
    expect(text).toMatch(/hub_http_requests_total\{interface="consumer",action="getmessages",status="200"\} 1\b/);
    expect(text).toMatch(/hub_waiting_long_polls 0/);
  });

  it('consumes nothing for a client that left while waiting: the next poll gets it', async () => {
    const h = await hub();
    const id = idOf(await get(h, 'consumer/SubscribeToMessage', app));
    const controller = new AbortController();
    const gone = call(h, 'GET', 'consumer/GetMessages', app, { query: { subscriptionId: id, timeout: 10_000 }, signal: controller.signal }).catch(() => 'aborted');
    await waitingPolls(h, 1);
    controller.abort();
    expect(await gone).toBe('aborted');
    for (let i = 0; i < 100; i++) {
      const text = await (await fetch(`${h.url}/metrics?SentinelName=Management&PackageName=Prom&AccessKey=${ADMIN_KEY}`)).text();
      if (/hub_waiting_long_polls 0/.test(text)) break;
      await sleep(20);
    }
    await get(h, 'consumer/SendMessage', consumer('Other'), { scope: 'All', key: 'Ping', data: 42 });
    const next = await get(h, 'consumer/GetMessages', app, { subscriptionId: id, timeout: 0 });
    expect(next.json<{ Key: string; Data: unknown }[]>().map((m) => [m.Key, m.Data])).toEqual([['Ping', 42]]);
  });
});
