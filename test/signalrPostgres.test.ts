/**
 * A long-polling SignalR connection whose requests land on two hub processes in turn, on one
 * PostgreSQL database: its token names its subscriptions, so either process serves it, and each poll
 * resumes exactly where the other left it (nothing lost, nothing twice), woken across processes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageRecord } from '../src/hub/records.js';
import { nginxAvailable, startNginxHubs } from './support/nginxHubs.js';
import type { NginxHubs } from './support/nginxHubs.js';
import { postgresServer, testDatabase } from './support/postgres.js';
import type { TestDatabase } from './support/postgres.js';
import { RawSignalRClient } from './support/signalrClient.js';
import { consumer, DEV_KEY, post } from './support/testHub.js';
import { until } from './support/until.js';

const server = await postgresServer();
const runs = server.available && nginxAvailable();

const dataOf = (frames: unknown[] | undefined) =>
  (frames ?? []).map((f) => ((f as { A: MessageRecord[] }).A[0] as MessageRecord).Data);

describe.skipIf(!runs)('SignalR long polling across two hub processes on PostgreSQL', () => {
  let database: TestDatabase;
  let cluster: NginxHubs;

  beforeAll(async () => {
    database = await testDatabase(server);
    cluster = await startNginxHubs(database.url, 2);
  }, 240_000);
  afterAll(async () => {
    await cluster?.stop();
    await database?.drop();
  });

  it('resumes on either process exactly after the messageId', async () => {
    const [a, b] = cluster.hubs;
    const client = new RawSignalRClient(
      a.url,
      { SentinelName: 'Consumer', PackageName: 'Roaming', AccessKey: DEV_KEY },
      ['ConsumerHub'],
      '1.5',
    );
    await client.negotiate();
    client.base = b.url;
    await client.connectLongPolling();
    client.base = a.url;
    expect(await client.start('longPolling')).toEqual({ Response: 'started' });
    const sender = consumer('Sender');
    const send = async (via: { url: string }, data: number | string) =>
      expect(
        (await post(via, 'consumer/SendMessage', sender, { Scope: { Scope: 'All' }, Key: 'K', Data: data })).status,
      ).toBe(204);

    const received: unknown[] = [];
    for (let i = 0; i < 12; i++) {
      const here = i % 2 === 0 ? a : b;
      const there = i % 2 === 0 ? b : a;
      client.base = here.url;
      if (i % 3 === 0) {
        // Sent through the other process while this poll waits: the notifier wakes it across processes.
        const waiting = client.poll();
        await new Promise((resolve) => setTimeout(resolve, 200));
        await send(there, i);
        received.push(...dataOf((await waiting).M));
      } else {
        await send(there, i);
        received.push(...dataOf((await client.poll()).M));
      }
    }
    // Every message once, in order, whichever process answered.
    for (let tries = 0; received.length < 12 && tries < 5; tries++) received.push(...dataOf((await client.poll()).M));
    expect(received).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);

    // Through nginx (round-robin, no affinity) as well.
    client.base = cluster.url;
    await send(cluster, 'via nginx');
    expect(dataOf((await client.poll()).M)).toEqual(['via nginx']);
  }, 120_000);

  it('serves WebSockets through nginx (deploy/nginx.conf passes the upgrade on)', async () => {
    const client = new RawSignalRClient(
      cluster.url,
      { SentinelName: 'Consumer', PackageName: 'Socket', AccessKey: DEV_KEY },
      ['ConsumerHub'],
      '1.5',
    );
    try {
      await client.negotiate();
      await client.openSocket();
      expect((await client.invoke('ConsumerHub', 'SubscribeMessages', 'G')).E).toBeUndefined();
      const sent = await post(cluster, 'consumer/SendMessage', consumer('Sender'), {
        Scope: { Scope: 'Group', Args: ['G'] },
        Key: 'K',
        Data: 'ws',
      });
      expect(sent.status).toBe(204);
      await until(() => client.of('ReceiveMessage').length === 1);
    } finally {
      client.close();
    }
  });
});
