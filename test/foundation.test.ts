import Database from 'better-sqlite3';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfigurationFile } from '../src/config/xmlFile.js';
import type { Identity } from './support/testHub.js';
import { ADMIN_KEY, DEV_KEY, admin, call, consumer, get, pkg, post, startTestHub, tempDir } from './support/testHub.js';
import { waitingPolls } from './support/waitingPolls.js';

const hubs: { stop(): Promise<void> }[] = [];
const track = <T extends { stop(): Promise<void> }>(hub: T) => {
  hubs.push(hub);
  return hub;
};
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.stop()));
});

/** Sends raw bytes on one connection and collects everything until the server closes or `ms` pass. */
function rawExchange(port: number, payload: string, ms = 500): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(payload));
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString()));
    socket.on('error', reject);
    const done = () => resolve(data);
    socket.on('close', done);
    setTimeout(() => {
      socket.destroy();
      done();
    }, ms);
  });
}

describe('first start', () => {
  it('writes the configuration file with a management credential whose key works', async () => {
    const dataDir = tempDir();
    const hub = track(await startTestHub({ dataDir, config: null, options: { adminKey: 'first-start-key' } }));
    const config = parseConfigurationFile(fs.readFileSync(path.join(dataDir, 'hub.config.xml'), 'utf8')).config;
    expect(config.listenUris).toEqual(['http://+:8088/']);
    expect(config.credentials[0]).toMatchObject({
      accessKey: 'first-start-key',
      enableManagementAPI: true,
      enableControlHub: true,
    });
    const ok = await get(hub, 'management/CheckAccess', { ...admin, AccessKey: 'first-start-key' });
    expect(ok.status).toBe(200);
    expect(ok.text).toBe('');
  });

  it('generates a random key when HUB_ADMIN_KEY is not set, and reports it once', async () => {
    const hub = track(await startTestHub({ config: null }));
    expect(hub.generatedAdminKey).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(
      (await get(hub, 'management/CheckAccess', { ...admin, AccessKey: hub.generatedAdminKey as string })).status,
    ).toBe(200);
  });
});

describe('authentication', () => {
  const cases: [string, string, Identity | undefined, number][] = [];
  const interfaces: [string, Identity][] = [
    ['consumer', consumer()],
    ['platform', pkg('S1', 'P1')],
    ['constellation', pkg('S1', 'P1')],
    ['management', admin],
  ];
  for (const [iface, good] of interfaces) {
    cases.push([iface, 'no values', undefined, 403]);
    cases.push([iface, 'a wrong key', { ...good, AccessKey: 'wrong' }, 403]);
    cases.push([iface, 'a disabled credential', { ...good, AccessKey: 'disabled-key-0001' }, 403]);
    cases.push([iface, 'the correct values', good, 200]);
  }
  cases.push(['management', 'a credential without the management right', { ...admin, AccessKey: DEV_KEY }, 403]);
  cases.push(['platform', 'another sentinel’s key', pkg('S1', 'P1', 'other-key-0001'), 403]);
  cases.push(['platform', 'an undeclared package', pkg('S1', 'Nope'), 403]);
  cases.push(['consumer', 'a sentinel name other than Consumer', { ...consumer(), SentinelName: 'S1' }, 403]);

  it.each(cases)('%s with %s answers %i', async (iface, _what, identity, status) => {
    const hub = track(await startTestHub());
    const reply = await get(hub, `${iface}/CheckAccess`, identity);
    expect(reply.status).toBe(status);
    if (status === 403)
      expect(reply.json()).toEqual({
        Message: 'Authorization has been denied for this request.',
        Code: 'AccessDenied',
      });
  });

  it('accepts the three values as headers, and the query wins over headers', async () => {
    const hub = track(await startTestHub());
    const headers = { SentinelName: 'Consumer', PackageName: 'App', AccessKey: DEV_KEY };
    expect((await call(hub, 'GET', 'consumer/CheckAccess', undefined, { headers })).status).toBe(200);
    const both = await call(hub, 'GET', 'consumer/CheckAccess', { ...consumer(), AccessKey: 'wrong' }, { headers });
    expect(both.status).toBe(403);
  });

  it('delays a refusal by the configured time', async () => {
    const hub = track(await startTestHub({ options: { authFailureDelayMs: 300 } }));
    const started = Date.now();
    expect((await get(hub, 'consumer/CheckAccess', { ...consumer(), AccessKey: 'x' })).status).toBe(403);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });
});

describe('routing and errors', () => {
  it('answers an unknown action with 404 and the Message/MessageDetail pair', async () => {
    const hub = track(await startTestHub());
    const reply = await get(hub, 'consumer/Nope', consumer());
    expect(reply.status).toBe(404);
    expect(reply.json()).toEqual({
      Message: "No HTTP resource was found that matches the request URI '/rest/consumer/Nope'.",
      MessageDetail: "No action was found on the consumer interface that matches the name 'Nope'.",
      Code: 'NotFound',
    });
  });

  it('answers a known action with the wrong method with 405', async () => {
    const hub = track(await startTestHub());
    const reply = await call(hub, 'POST', 'consumer/CheckAccess', consumer());
    expect(reply.status).toBe(405);
    expect(reply.json<{ Message: string }>().Message).toMatch(/method/);
  });

  it('matches action names case-insensitively and ignores unknown parameters', async () => {
    const hub = track(await startTestHub());
    expect((await get(hub, 'consumer/checkaccess', consumer(), { timestamp: 123 })).status).toBe(200);
    expect((await get(hub, 'CONSTELLATION/CHECKACCESS', pkg('S1', 'P1'))).status).toBe(200);
  });

  it('answers malformed JSON with 400 and an oversized body with 413, both as JSON', async () => {
    const hub = track(await startTestHub({ options: { bodyLimitBytes: 2048 } }));
    const malformed = await post(hub, 'consumer/SendMessage', consumer(), '{"Scope": ');
    expect(malformed.status).toBe(400);
    expect(malformed.json<{ Message: string }>().Message).toMatch(/not valid JSON/);
    const big = await post(hub, 'consumer/SendMessage', consumer(), {
      Scope: { Scope: 'All' },
      Key: 'k',
      Data: 'x'.repeat(5000),
    });
    expect(big.status).toBe(413);
    expect(big.json<{ Message: string }>().Message).toMatch(/too large/);
    expect((await get(hub, 'consumer/CheckAccess', consumer())).status).toBe(200);
    // Without a valid key the body is never read: 403, not 413, and the connection still serves.
    const stranger = await post(hub, 'consumer/SendMessage', consumer('App', 'wrong-key-0001'), {
      Scope: { Scope: 'All' },
      Key: 'k',
      Data: 'x'.repeat(5000),
    });
    expect(stranger.status).toBe(403);
  });

  it('answers a CORS preflight without authentication and allows any origin', async () => {
    const hub = track(await startTestHub());
    const response = await fetch(`${hub.url}/rest/consumer/SendMessage`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'http://dashboard.local',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    const plain = await fetch(
      `${hub.url}/rest/consumer/CheckAccess?SentinelName=Consumer&PackageName=A&AccessKey=${DEV_KEY}`,
      { headers: { Origin: 'http://x' } },
    );
    expect(plain.headers.get('access-control-allow-origin')).toBe('*');
    // Without Origin (scripts, devices) no CORS headers, but caches are told the answer depends on it.
    const noOrigin = await fetch(
      `${hub.url}/rest/consumer/CheckAccess?SentinelName=Consumer&PackageName=A&AccessKey=${DEV_KEY}`,
    );
    expect(noOrigin.status).toBe(200);
    expect(noOrigin.headers.get('access-control-allow-origin')).toBeNull();
    expect(noOrigin.headers.get('vary')).toBe('Origin');
    // A push's 204 is written outside Koa (context.ts noContent): the same headers all the same.
    const push = `${hub.url}/rest/platform/PushStateObject?SentinelName=S1&PackageName=P1&AccessKey=${DEV_KEY}&name=V&value=1`;
    const pushed = await fetch(push);
    expect(pushed.status).toBe(204);
    expect(pushed.headers.get('vary')).toBe('Origin');
    expect(pushed.headers.get('access-control-allow-origin')).toBeNull();
    expect(await pushed.text()).toBe('');
    const fromPage = await fetch(push, { headers: { Origin: 'http://x' } });
    expect(fromPage.status).toBe(204);
    expect(fromPage.headers.get('access-control-allow-origin')).toBe('*');
    expect(fromPage.headers.get('vary')).toBe('Origin');
  });

  it('serves the next request on a keep-alive connection after stray CRLFs, with Content-Length', async () => {
    const hub = track(await startTestHub());
    const q = `SentinelName=S1&PackageName=P1&AccessKey=${DEV_KEY}`;
    const body = '{"Name":"T","Value":1}';
    const raw = await rawExchange(
      hub.port,
      `POST /rest/constellation/PushStateObject?${q} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}\r\n\r\n` +
        `GET /rest/constellation/CheckAccess?${q} HTTP/1.1\r\nHost: x\r\n\r\n`,
    );
    const statuses = [...raw.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]);
    expect(statuses).toEqual(['204', '200']);
    expect(raw).not.toMatch(/Transfer-Encoding: chunked/i);
  });

  it('reports health, and readiness only while serving', async () => {
    const hub = track(await startTestHub());
    expect((await fetch(`${hub.url}/health`)).status).toBe(200);
    expect((await fetch(`${hub.url}/ready`)).status).toBe(200);
  });
});

describe('restarts and a broken configuration', () => {
  it('keeps configuration and data across a stop and start on the same directory', async () => {
    const dataDir = tempDir();
    const first = await startTestHub({ dataDir });
    expect((await get(first, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'Kept', value: 7 })).status).toBe(
      204,
    );
    expect(
      (await post(first, 'management/credentials', admin, { Name: 'Late', AccessKey: 'late-key-0001' })).status,
    ).toBe(200);
    await first.stop();
    const second = track(await startTestHub({ dataDir }));
    expect((await get(second, 'consumer/CheckAccess', consumer('App', 'late-key-0001'))).status).toBe(200);
    const objects = (await get(second, 'consumer/RequestStateObjects', consumer(), { name: 'Kept' })).json<
      { Value: number }[]
    >();
    expect(objects.map((o) => o.Value)).toEqual([7]);
  });

  it('refuses to start on a configuration error and leaves the database untouched', async () => {
    const dataDir = tempDir();
    const first = await startTestHub({ dataDir });
    await get(first, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'Kept', value: 1 });
    await first.stop();
    const dbFile = path.join(dataDir, 'hub.db');
    const before = fs.readFileSync(dbFile);
    const broken = fs
      .readFileSync(path.join(dataDir, 'hub.config.xml'), 'utf8')
      .replace('credential="Dev"', 'credential="Missing"');
    fs.writeFileSync(path.join(dataDir, 'hub.config.xml'), broken);
    await expect(startTestHub({ dataDir })).rejects.toThrow(/unknown credential "Missing"/);
    expect(fs.readFileSync(dbFile).equals(before)).toBe(true);
    const sqlite = new Database(dbFile, { readonly: true });
    // The newest applied version in the history is still the file as the first start read it.
    const latest = sqlite.prepare('select text from configuration_versions order by id desc limit 1').get() as {
      text: string;
    };
    expect(latest.text).toContain('credential="Dev"');
    expect(latest.text).not.toContain('credential="Missing"');
    sqlite.close();
  });

  it('answers waiting long-polls when it stops', async () => {
    const hub = await startTestHub();
    const id = (await get(hub, 'consumer/SubscribeToMessage', consumer())).json<string>();
    // Its timeout outlives the test's: only the stop can answer it.
    const poll = get(hub, 'consumer/GetMessages', consumer(), { subscriptionId: id, timeout: 120_000 });
    await waitingPolls(hub, 1);
    await hub.stop();
    const reply = await poll;
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual([]);
  });
});

void ADMIN_KEY;
