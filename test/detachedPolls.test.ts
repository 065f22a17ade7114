/**
 * Long-polls are answered outside Koa once they wait (src/http/detached.ts): the answer must be the one
 * Koa would have sent (status, headers, JSON body, error bodies), counted in the metrics, and a client
 * that left must not lose anything.
 */
import diagnostics from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { call, consumer, get, idOf, pkg, hubsStoppedAfterEach, testConfiguration } from './support/testHub.js';
import { leaveWaitingPoll, metricsText, waitingPolls } from './support/waitingPolls.js';

const hub = hubsStoppedAfterEach();
const app = consumer();

describe('a waiting long-poll answered outside Koa', () => {
  it('answers a woken poll with the same status, headers and JSON body as an immediate one', async () => {
    const h = await hub();
    const id = idOf(await get(h, 'consumer/SubscribeToStateObjects', app, { name: 'T' }));
    const origin = { Origin: 'http://console.example' };
    const waiting = call(h, 'GET', 'consumer/GetStateObjects', app, {
      query: { subscriptionId: id, timeout: 10_000 },
      headers: origin,
    });
    await waitingPolls(h, 1);
    await get(h, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'T', value: 7 });
    const woken = await waiting;
    expect(woken.status).toBe(200);
    expect(
      woken
        .json<{ StateObject: { Name: string; Value: unknown } }[]>()
        .map((u) => [u.StateObject.Name, u.StateObject.Value]),
    ).toEqual([['T', 7]]);
    expect(woken.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(woken.headers.get('content-length')).toBe(String(Buffer.byteLength(woken.text)));
    expect(woken.headers.get('access-control-allow-origin')).toBe('*');

    // Without Origin: Vary, and an empty array on a timeout.
    const timedOut = await call(h, 'GET', 'consumer/GetStateObjects', app, {
      query: { subscriptionId: id, timeout: 1000 },
    });
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
    expect(lost.json<{ Message: string }>().Message).toBe(
      `The subscription '${unknownId}' does not exist or has expired.`,
    );
    // Bad parameters are still answered inside Koa, before anything waits.
    const bad = await get(h, 'consumer/GetMessages', app, { subscriptionId: unknownId, timeout: 'soon' });
    expect(bad.status).toBe(400);
    expect(bad.json<{ Message: string }>().Message).toContain("'timeout'");

    const id = idOf(await get(h, 'consumer/SubscribeToMessage', app));
    const waiting = get(h, 'consumer/GetMessages', app, { subscriptionId: id, timeout: 10_000 });
    await waitingPolls(h, 1);
    await get(h, 'consumer/SendMessage', consumer('Other'), { scope: 'All', key: 'Ping', data: 1 });
    expect((await waiting).status).toBe(200);
    const text = await metricsText(h);
    expect(text).toMatch(/hub_http_requests_total\{interface="consumer",action="getmessages",status="500"\} 1\b/);
    expect(text).toMatch(/hub_http_requests_total\{interface="consumer",action="getmessages",status="400"\} 1\b/);
    expect(text).toMatch(/hub_http_requests_total\{interface="consumer",action="getmessages",status="200"\} 1\b/);
    expect(text).toMatch(/hub_waiting_long_polls 0/);
  });

  it('consumes nothing for a client that left while waiting: the next poll gets it', async () => {
    const h = await hub();
    const id = idOf(await get(h, 'consumer/SubscribeToMessage', app));
    await leaveWaitingPoll(h, 'consumer/GetMessages', app, { subscriptionId: id, timeout: 10_000 });
    await get(h, 'consumer/SendMessage', consumer('Other'), { scope: 'All', key: 'Ping', data: 42 });
    const next = await get(h, 'consumer/GetMessages', app, { subscriptionId: id, timeout: 0 });
    expect(next.json<{ Key: string; Data: unknown }[]>().map((m) => [m.Key, m.Data])).toEqual([['Ping', 42]]);
  });

  it('holds no Koa remnants while it waits: no on-finished listeners, no header object, one close listener', async () => {
    const h = await hub();
    const id = idOf(await get(h, 'consumer/SubscribeToStateObjects', app, { name: 'T' }));
    // Node publishes every request the hub's server receives (a public channel): the poll's own objects.
    const seen: { request: IncomingMessage; response: ServerResponse }[] = [];
    const onRequest = (message: unknown) =>
      seen.push(message as { request: IncomingMessage; response: ServerResponse });
    diagnostics.subscribe('http.server.request.start', onRequest);
    try {
      const waiting = call(h, 'GET', 'consumer/GetStateObjects', app, {
        query: { subscriptionId: id, timeout: 10_000 },
      });
      await waitingPolls(h, 1);
      const poll = seen.find((s) => s.request.url?.includes('GetStateObjects'));
      expect(poll).toBeDefined();
      const { response } = poll as { response: ServerResponse };
      // on-finished (Koa) listens for 'end' on every response it watches (and 'finish', and the socket's
      // 'close' and 'error'); Node itself never does.
      expect(response.listenerCount('end')).toBe(0);
      expect(response.listenerCount('close')).toBe(1);
      expect(response.getHeaderNames()).toEqual([]);
      await get(h, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'T', value: 1 });
      const woken = await waiting;
      expect(woken.status).toBe(200);
      expect(woken.headers.get('vary')).toBe('Origin');
      expect(woken.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(woken.json<{ StateObject: { Value: unknown } }[]>().map((u) => u.StateObject.Value)).toEqual([1]);
    } finally {
      diagnostics.unsubscribe('http.server.request.start', onRequest);
    }
  });

  it('sets Vary on poll answers given inside Koa (bad input, HEAD) as on every other answer', async () => {
    const h = await hub();
    const bad = await get(h, 'consumer/GetStateObjects', app, { subscriptionId: 'x', timeout: 'soon' });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('vary')).toBe('Origin');
    const head = await call(h, 'HEAD', 'consumer/GetStateObjects', app, { query: { subscriptionId: 'x' } });
    expect(head.status).toBe(405);
    expect(head.headers.get('vary')).toBe('Origin');
    const options = await call(h, 'OPTIONS', 'consumer/GetStateObjects', undefined);
    expect(options.status).toBe(204);
    expect(options.headers.get('vary')).toBe('Origin');
    // With Origin, the CORS headers and no Vary: Origin from the hub, as before.
    const cors = await call(h, 'GET', 'consumer/GetStateObjects', app, {
      query: { subscriptionId: 'x', timeout: 'soon' },
      headers: { Origin: 'http://console.example' },
    });
    expect(cors.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('stops waiting as soon as the client leaves (under a listen prefix) and answers the next poll on that subscription', async () => {
    // Under a listen prefix the poll is recognised after the prefix is taken off (createHub.ts).
    const h = await hub({ config: { ...testConfiguration(), listenUris: ['http://+:8088/constellation/'] } });
    expect(h.url).toMatch(/\/constellation$/);
    const id = idOf(await get(h, 'consumer/SubscribeToStateObjects', app, { name: 'T' }));
    for (let round = 0; round < 3; round++)
      await leaveWaitingPoll(h, 'consumer/GetStateObjects', app, { subscriptionId: id, timeout: 60_000 });
    await get(h, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'T', value: 2 });
    const next = await get(h, 'consumer/GetStateObjects', app, { subscriptionId: id, timeout: 0 });
    expect(next.json<{ StateObject: { Value: unknown } }[]>().map((u) => u.StateObject.Value)).toEqual([2]);
  });
});
