/**
 * Refusals and limits of the SignalR endpoints, each answered cleanly: a wrong key (403 JSON at
 * negotiate), a hub the identity may not use, the connections cap per credential (429), frames over
 * 64 KB (413 on /send, the socket closed on WebSockets, others unaffected), malformed data, unknown
 * hubs and methods and wrong argument counts (a hub error result, never a 500), a token used by another
 * identity, a slow WebSocket reader (closed alone); and what the protocol must say: the negotiated
 * version, CORS with credentials, the doubled slash and the listen prefix.
 */
import type { Socket } from 'node:net';
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { testConfiguration } from './support/testHub.js';
import { RawSignalRClient } from './support/signalrClient.js';
import { DEV_KEY, hubsStoppedAfterEach, OTHER_KEY, pkg, post } from './support/testHub.js';
import { until } from './support/until.js';

const hub = hubsStoppedAfterEach();
const clients: RawSignalRClient[] = [];
afterEach(() => clients.splice(0).forEach((c) => c.close()));

function client(url: string, key = DEV_KEY, name = 'Raw', hubs = ['ConsumerHub'], protocol = '1.5'): RawSignalRClient {
  const c = new RawSignalRClient(url, { SentinelName: 'Consumer', PackageName: name, AccessKey: key }, hubs, protocol);
  clients.push(c);
  return c;
}

const negotiateUrl = (base: string, query: Record<string, string>) => {
  const url = new URL(`${base}/signalr/negotiate`);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  return url;
};

const identity = { SentinelName: 'Consumer', PackageName: 'Page', AccessKey: DEV_KEY };
const consumerHub = JSON.stringify([{ name: 'consumerhub' }]);

describe('negotiate', () => {
  it('answers the protocol version ASP.NET would: clamp(clientProtocol, 1.2, 1.5)', async () => {
    const h = await hub();
    for (const [asked, answered] of [
      ['1.5', '1.5'],
      ['2.1', '1.5'],
      ['1.4', '1.4'],
      ['1.0', '1.2'],
      [undefined, '1.2'],
    ] as const) {
      const query: Record<string, string> = { ...identity, connectionData: consumerHub };
      if (asked) query.clientProtocol = asked;
      const reply = await fetch(negotiateUrl(h.url, query));
      const body = (await reply.json()) as Record<string, unknown>;
      expect(body.ProtocolVersion, String(asked)).toBe(answered);
      expect(body).toMatchObject({
        Url: '/signalr',
        TryWebSockets: true,
        DisconnectTimeout: 30,
        ConnectionTimeout: 110,
        KeepAliveTimeout: 20,
      });
    }
  });

  it('echoes Origin with credentials allowed, and answers a preflight', async () => {
    const h = await hub();
    const reply = await fetch(negotiateUrl(h.url, { ...identity, connectionData: consumerHub }), {
      headers: { Origin: 'http://page.example' },
    });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('access-control-allow-origin')).toBe('http://page.example');
    expect(reply.headers.get('access-control-allow-credentials')).toBe('true');
    const preflight = await fetch(`${h.url}/signalr/send`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'http://page.example',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'accesskey',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toBe('accesskey');
  });

  it('is served under the listen prefix and with a doubled slash', async () => {
    const h = await hub({ config: { ...testConfiguration(), listenUris: ['http://+:8088/constellation/'] } });
    expect(h.url).toMatch(/\/constellation$/);
    for (const base of [h.url, `${h.url}/`, h.url.replace('/constellation', '/Constellation')]) {
      const reply = await fetch(negotiateUrl(base, { ...identity, connectionData: consumerHub }));
      expect(reply.status, base).toBe(200);
      expect(((await reply.json()) as { Url: string }).Url).toMatch(/^\/[cC]onstellation\/signalr$/);
    }
    const outside = await fetch(
      negotiateUrl(h.url.replace('/constellation', ''), { ...identity, connectionData: consumerHub }),
    );
    expect(outside.status).toBe(404);
  });

  it('refuses a wrong key (403), a hub the identity may not use (403), an unknown hub and bad connectionData (400), never 500', async () => {
    const h = await hub();
    const cases: [Record<string, string>, number, string][] = [
      [{ ...identity, AccessKey: 'wrong-key-0001', connectionData: consumerHub }, 403, 'AccessDenied'],
      [{ ...identity, connectionData: '[{"name":"controlhub"}]' }, 403, 'SignalRHubNotAllowed'],
      [{ ...identity, connectionData: '[{"name":"nosuchhub"}]' }, 400, 'SignalRUnknownHub'],
      [{ ...identity, connectionData: '[{"name":' }, 400, 'SignalRBadRequest'],
      [{ ...identity }, 400, 'SignalRBadRequest'],
      [{ ...identity, connectionData: '{"name":"consumerhub"}' }, 400, 'SignalRBadRequest'],
    ];
    for (const [query, status, code] of cases) {
      const reply = await fetch(negotiateUrl(h.url, query));
      expect(reply.status, JSON.stringify(query)).toBe(status);
      expect(reply.headers.get('content-type')).toMatch(/application\/json/);
      expect(await reply.json()).toMatchObject({ Code: code });
    }
    expect((await fetch(`${h.url}/signalr/hubs`)).status).toBe(404);
  });

  it('caps the connections of one credential (HUB_SIGNALR_MAX_CONNECTIONS_PER_CREDENTIAL), others unaffected', async () => {
    const h = await hub({ options: { signalrMaxConnectionsPerCredential: 2 } });
    await client(h.url).negotiate();
    await client(h.url).negotiate();
    const refused = await client(h.url).request('negotiate');
    expect(refused.status).toBe(429);
    expect(refused.json()).toMatchObject({ Code: 'SignalRTooManyConnections' });
    await client(h.url, OTHER_KEY).negotiate();
  });
});

describe('calls', () => {
  it('answers malformed data, unknown hubs and methods and wrong argument counts with a hub error', async () => {
    const h = await hub();
    const c = client(h.url);
    await c.negotiate();
    await c.connectLongPolling();
    const send = async (data: string) => {
      const reply = await c.request('send', { transport: 'longPolling' }, { data });
      expect(reply.status, data).toBe(200);
      return reply.json<{ I: string; E?: string }>();
    };
    expect((await send('not json')).E).toMatch(/not valid JSON/);
    expect((await send('[1,2]')).E).toMatch(/not a hub invocation/);
    expect((await send('{"H":"ConsumerHub","M":"SendMessage","I":"4","A":{}}')).E).toMatch(/must be an array/);
    expect(await send('{"H":"NoHub","M":"X","A":[],"I":5}')).toEqual({
      I: '5',
      E: "'NoHub' Hub could not be resolved.",
    });
    expect((await send('{"H":"ControlHub","M":"RequestSentinelsList","A":[],"I":6}')).E).toMatch(
      /could not be resolved/,
    );
    expect((await send('{"H":"consumerhub","M":"Nope","A":[],"I":7}')).E).toMatch(
      /'Nope' method could not be resolved/,
    );
    expect((await send('{"H":"consumerhub","M":"SubscribeMessages","A":[],"I":8}')).E).toMatch(/takes 1 argument/);
    expect((await send('{"H":"consumerhub","M":"SendMessage","A":["x","K",1],"I":9}')).E).toMatch(
      /scope must be an object/,
    );
    expect((await send('{"H":"consumerhub","M":"SendMessage","A":[{"Scope":"Nowhere"},"K",1],"I":10}')).E).toMatch(
      /scope/i,
    );
    expect((await send('{"H":"consumerhub","M":"RequestStateObjects","A":[1,2,3,4],"I":11}')).E).toMatch(
      /must be a string/,
    );
    // Still serving.
    expect(await send('{"H":"consumerhub","M":"SubscribeMessages","A":["G"],"I":12}')).toEqual({ I: '12' });
  });

  it('refuses a send body over 64 KB (413) and closes a socket that sends a frame over 64 KB, others unaffected', async () => {
    const h = await hub();
    const lp = client(h.url);
    await lp.negotiate();
    await lp.connectLongPolling();
    const big = JSON.stringify({
      H: 'consumerhub',
      M: 'SendMessage',
      A: [{ Scope: 'All' }, 'K', 'x'.repeat(70_000)],
      I: 1,
    });
    const refused = await lp.request('send', { transport: 'longPolling' }, { data: big });
    expect(refused.status).toBe(413);

    const victim = client(h.url);
    await victim.negotiate();
    await victim.openSocket();
    const bystander = client(h.url, DEV_KEY, 'Bystander');
    await bystander.negotiate();
    await bystander.openSocket();
    victim.sendRaw(big);
    await until(() => victim.socketState === WebSocket.CLOSED);
    expect((await bystander.invoke('ConsumerHub', 'SubscribeMessages', 'G')).E).toBeUndefined();
  });

  it('refuses a connection token used by another identity', async () => {
    const h = await hub();
    const owner = client(h.url);
    await owner.negotiate();
    const thief = client(h.url, OTHER_KEY, 'Thief');
    thief.negotiated = { ConnectionToken: owner.token };
    const reply = await thief.request('connect', { transport: 'longPolling' });
    expect(reply.status).toBe(403);
    const forged = client(h.url);
    forged.negotiated = { ConnectionToken: 'not-a-token' };
    const bad = await forged.request('connect', { transport: 'longPolling' });
    expect(bad.status).toBe(400);
    expect(bad.json()).toMatchObject({ Code: 'SignalRUnknownConnection' });
    const transport = await owner.request('connect', { transport: 'foreverFrame' });
    expect(transport.status).toBe(400);
  });

  it('closes a WebSocket whose reader is too slow, and only that one', async () => {
    const h = await hub({ options: { signalrSendBufferBytes: 256 * 1024 } });
    const slow = client(h.url, DEV_KEY, 'Slow');
    await slow.negotiate();
    await slow.openSocket();
    const fast = client(h.url, DEV_KEY, 'Fast');
    await fast.negotiate();
    await fast.openSocket();
    for (const c of [slow, fast])
      expect((await c.invoke('ConsumerHub', 'SubscribeStateObjects', 'S1', 'P1', 'Big', '*')).E).toBeUndefined();
    // The slow page stops reading its socket.
    const socket = (slow as unknown as { socket: { _socket: Socket } }).socket._socket;
    socket.pause();
    const value = 'v'.repeat(60_000);
    for (let i = 0; i < 150; i++) {
      expect(
        (await post(h, 'platform/PushStateObject', pkg('S1', 'P1'), { Name: 'Big', Value: `${i}:${value}` })).status,
      ).toBe(204);
    }
    const last = (c: RawSignalRClient) =>
      c.of('UpdateStateObject').some(([so]) => String((so as { Value: string }).Value).startsWith('149:'));
    await until(() => last(fast));
    // Reading again, the slow page finds its connection closed before the last update.
    socket.resume();
    await until(() => slow.socketState === WebSocket.CLOSED);
    expect(last(slow)).toBe(false);
    expect((await fast.invoke('ConsumerHub', 'SubscribeMessages', 'G')).E).toBeUndefined();
  });
});

describe('/metrics', () => {
  it('counts the connections by hub and transport', async () => {
    const h = await hub({ options: { metricsOpen: true } });
    const ws = client(h.url);
    await ws.negotiate();
    await ws.openSocket();
    const lp = client(h.url, DEV_KEY, 'Polling');
    await lp.negotiate();
    await lp.connectLongPolling();
    const packageHost = new RawSignalRClient(h.url, { SentinelName: 'S1', PackageName: 'P1', AccessKey: DEV_KEY }, [
      'ConstellationHub',
    ]);
    clients.push(packageHost);
    await packageHost.negotiate();
    await packageHost.openSocket();
    const text = await (await fetch(`${h.url}/metrics`)).text();
    expect(text).toMatch(/hub_signalr_connections\{hub="ConsumerHub",transport="webSockets"\} 1/);
    expect(text).toMatch(/hub_signalr_connections\{hub="ConsumerHub",transport="longPolling"\} 1/);
    expect(text).toMatch(/hub_signalr_connections\{hub="ConstellationHub",transport="webSockets"\} 1/);
  });
});
