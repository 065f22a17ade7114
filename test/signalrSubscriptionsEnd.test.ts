/**
 * A SignalR connection's subscriptions (its messages, its StateObject filters) end with it, on SQLite
 * and on PostgreSQL: at `abort`, and once its state expires DisconnectTimeout after its client was last
 * seen, not 300 s later at the idle sweep. REST subscriptions, of the same caller too, are unaffected;
 * and on PostgreSQL a connection another process serves now keeps them when the first one's state expires.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { HubOptions } from '../src/settings.js';
import { decodeToken } from '../src/http/signalr/connectionToken.js';
import type { MessageRecord } from '../src/hub/records.js';
import { postgresServer, testDatabase } from './support/postgres.js';
import { RawSignalRClient } from './support/signalrClient.js';
import { consumer, DEV_KEY, get, hubsStoppedAfterEach, idOf, post } from './support/testHub.js';
import type { TestHub } from './support/testHub.js';
import { until } from './support/until.js';
import { metricsText, waitingPolls } from './support/waitingPolls.js';

const server = await postgresServer();
const hub = hubsStoppedAfterEach();
const clients: RawSignalRClient[] = [];
afterEach(() => clients.splice(0).forEach((c) => c.close()));

const SHORT = { signalrTimings: { connectionTimeoutS: 1, disconnectTimeoutS: 1, keepAliveS: 1 } };
const page = consumer('Page');

const engines = [
  { name: 'SQLite', skip: false, options: async (): Promise<Partial<HubOptions>> => ({}) },
  {
    name: 'PostgreSQL',
    skip: !server.available,
    options: async (): Promise<Partial<HubOptions>> => ({ databaseUrl: (await testDatabase(server)).url }),
  },
];

function client(url: string): RawSignalRClient {
  const c = new RawSignalRClient(
    url,
    { SentinelName: page.SentinelName, PackageName: page.PackageName, AccessKey: DEV_KEY },
    ['ConsumerHub'],
    '1.5',
  );
  clients.push(c);
  return c;
}

/** A WebSocket connection with both subscriptions: a StateObject filter and a group. */
async function subscribed(url: string): Promise<RawSignalRClient> {
  const c = client(url);
  await c.negotiate();
  await c.openSocket();
  expect((await c.invoke('ConsumerHub', 'SubscribeStateObjects', '*', '*', 'Temp', '*')).E).toBeUndefined();
  expect((await c.invoke('ConsumerHub', 'SubscribeMessages', 'G')).E).toBeUndefined();
  return c;
}

/** Whether the caller's subscription exists: a REST poll of it answers 200, or the "expired" 500. */
async function exists(h: { url: string }, kind: 'messages' | 'stateObjects', id: string): Promise<boolean> {
  const action = kind === 'messages' ? 'consumer/GetMessages' : 'consumer/GetStateObjects';
  const reply = await get(h, action, page, { subscriptionId: id, timeout: 0 });
  if (reply.status === 500) expect(reply.text).toMatch(/does not exist or has expired/);
  else expect(reply.status).toBe(200);
  return reply.status === 200;
}

const idsOf = (c: RawSignalRClient) => decodeToken(c.token)!;

const sendToGroup = async (h: { url: string }, data: string) =>
  expect(
    (
      await post(h, 'consumer/SendMessage', consumer('Sender'), {
        Scope: { Scope: 'Group', Args: ['G'] },
        Key: 'K',
        Data: data,
      })
    ).status,
  ).toBe(204);

describe.each(engines)('a SignalR connection’s subscriptions on $name', ({ skip, options }) => {
  it.skipIf(skip)('are deleted at abort; a REST subscription of the same caller stays and delivers', async () => {
    const h = await hub({ options: await options() });
    const rest = idOf(await get(h, 'consumer/SubscribeToMessageGroup', page, { group: 'G' }));
    const c = await subscribed(h.url);
    const ids = idsOf(c);
    c.close();
    expect((await c.request('abort', { transport: 'webSockets' }, {})).status).toBe(200);
    expect(await exists(h, 'messages', ids.messages)).toBe(false);
    expect(await exists(h, 'stateObjects', ids.stateObjects)).toBe(false);
    await sendToGroup(h, 'to REST');
    const polled = await get(h, 'consumer/GetMessages', page, { subscriptionId: rest, timeout: 5 });
    expect(polled.json<MessageRecord[]>().map((m) => m.Data)).toEqual(['to REST']);
  });

  it.skipIf(skip)('are deleted once the connection expires, DisconnectTimeout after its client left', async () => {
    const h = await hub({ options: { ...(await options()), ...SHORT } });
    const c = await subscribed(h.url);
    const ids = idsOf(c);
    c.close();
    // Counted without a poll (a poll of them would be a use, and keep them).
    await until(async () => !/^hub_subscriptions\{.*\} [1-9]/m.test(await metricsText(h)));
    expect(await exists(h, 'messages', ids.messages)).toBe(false);
    expect(await exists(h, 'stateObjects', ids.stateObjects)).toBe(false);
  });
});

describe.skipIf(!server.available)('two hub processes on PostgreSQL', () => {
  it('keeps the subscriptions of a connection another process serves when the first one’s state expires', async () => {
    const { url: databaseUrl } = await testDatabase(server);
    const [a, b]: TestHub[] = [
      await hub({ options: { databaseUrl, ...SHORT } }),
      await hub({ options: { databaseUrl, ...SHORT } }),
    ];
    const c = await subscribed(a.url);
    const ids = idsOf(c);
    c.close();
    // Once a has seen the socket close (its takes for it ended: docs/signalr.md's known limits), the
    // client comes back through the other process (a load balancer without affinity).
    await waitingPolls(a, 0);
    c.base = b.url;
    await c.openSocket('reconnect');
    // Past a's DisconnectTimeout (1 s) and its expiry: b's connection still has them and gets what comes.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    await sendToGroup(a, 'after');
    await until(() => c.of('ReceiveMessage').some((args) => (args[0] as MessageRecord).Data === 'after'));
    expect(await exists(b, 'stateObjects', ids.stateObjects)).toBe(true);
  }, 30_000);
});
