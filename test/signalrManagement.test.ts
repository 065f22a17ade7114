/**
 * `management/server/status` lists the SignalR connections of the answering process (who, credential
 * name, hubs, transport, since), to a management credential only and without any key; a connection
 * leaves the list when its client aborts it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SignalRConnectionRecord } from '../src/http/management/records.js';
import { RawSignalRClient } from './support/signalrClient.js';
import { ADMIN_KEY, admin, consumer, DEV_KEY, get, hubsStoppedAfterEach } from './support/testHub.js';
import type { TestHub } from './support/testHub.js';

const hub = hubsStoppedAfterEach();
const clients: RawSignalRClient[] = [];
afterEach(() => clients.splice(0).forEach((c) => c.close()));

function client(url: string, headers: Record<string, string>, hubName: string, protocol: string) {
  const c = new RawSignalRClient(url, headers, [hubName], protocol);
  clients.push(c);
  return c;
}

async function connections(h: TestHub): Promise<SignalRConnectionRecord[]> {
  const reply = await get(h, 'management/server/status', admin);
  expect(reply.status).toBe(200);
  expect(reply.text).not.toContain(DEV_KEY);
  expect(reply.text).not.toContain(ADMIN_KEY);
  return reply.json<{ Connections: SignalRConnectionRecord[] }>().Connections;
}

describe('the SignalR connections in management/server/status', () => {
  it('lists each connection with its hub and transport, and forgets one its client aborts', async () => {
    const h = await hub();
    expect(await connections(h)).toEqual([]);
    const before = Date.now();

    const packageHost = client(
      h.url,
      { SentinelName: 'S1', PackageName: 'P1', AccessKey: DEV_KEY },
      'ConstellationHub',
      '1.4',
    );
    await packageHost.negotiate();
    await packageHost.openSocket();
    expect(await packageHost.start('webSockets')).toEqual({ Response: 'started' });

    const page = client(
      h.url,
      { SentinelName: 'Consumer', PackageName: 'Dashboard', AccessKey: DEV_KEY },
      'ConsumerHub',
      '1.5',
    );
    await page.negotiate();
    await page.connectLongPolling();
    expect(await page.start('longPolling')).toEqual({ Response: 'started' });

    const listed = await connections(h);
    const byWho = new Map(listed.map((c) => [c.Who, c]));
    expect([...byWho.keys()].sort()).toEqual(['Consumer/Dashboard', 'S1/P1']);
    expect(byWho.get('S1/P1')).toMatchObject({
      Id: packageHost.token.split('.')[0],
      Credential: 'Dev',
      Hubs: ['ConstellationHub'],
      Transport: 'webSockets',
    });
    expect(byWho.get('Consumer/Dashboard')).toMatchObject({
      Id: page.token.split('.')[0],
      Credential: 'Dev',
      Hubs: ['ConsumerHub'],
      Transport: 'longPolling',
    });
    for (const c of listed) {
      expect(Date.parse(c.Since)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(c.Since)).toBeLessThanOrEqual(Date.now());
    }

    expect((await page.request('abort', { transport: 'longPolling' }, {})).status).toBe(200);
    expect((await connections(h)).map((c) => c.Who)).toEqual(['S1/P1']);
    expect((await packageHost.request('abort', { transport: 'webSockets' }, {})).status).toBe(200);
    expect(await connections(h)).toEqual([]);
  });

  it('is refused to a credential without the management right, as every management route', async () => {
    const h = await hub();
    const page = client(
      h.url,
      { SentinelName: 'Consumer', PackageName: 'Dashboard', AccessKey: DEV_KEY },
      'ConsumerHub',
      '1.5',
    );
    await page.negotiate();
    await page.connectLongPolling();
    await page.start('longPolling');
    const refused = await get(h, 'management/server/status', consumer('Dashboard'));
    expect(refused.status).toBe(403);
    expect(refused.text).not.toContain('Connections');
    const wrongKey = await get(h, 'management/server/status', { ...admin, AccessKey: 'not-a-key-0001' });
    expect(wrongKey.status).toBe(403);
  });
});
