/**
 * Resuming without loss: a long-poll's answer is consumed only once the client's next poll carries its
 * cursor (given again, same cursor, when it carries the one before); a WebSocket /reconnect replays what
 * was pushed after the client's messageId and then what the store kept; a connection's state ends
 * after DisconnectTimeout without its client; and pages stay connected through a kill -9 of the hub.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { MessageRecord } from '../src/hub/records.js';
import { killCliProcesses, startHubProcess } from './support/hubCli.js';
import { stablePort } from './support/ports.js';
import { RawSignalRClient } from './support/signalrClient.js';
import type { Transport } from './support/signalrPage.js';
import { SignalRPage } from './support/signalrPage.js';
import { consumer, DEV_KEY, hubsStoppedAfterEach, post, tempDir } from './support/testHub.js';
import { until } from './support/until.js';

const hub = hubsStoppedAfterEach();
const clients: { close(): void }[] = [];
afterEach(() => clients.splice(0).forEach((c) => c.close()));
afterAll(killCliProcesses);

const SHORT = { signalrTimings: { connectionTimeoutS: 1, disconnectTimeoutS: 2, keepAliveS: 1 } };

function client(url: string): RawSignalRClient {
  const c = new RawSignalRClient(
    url,
    { SentinelName: 'Consumer', PackageName: 'Raw', AccessKey: DEV_KEY },
    ['ConsumerHub'],
    '1.5',
  );
  clients.push(c);
  return c;
}

const sendAll = async (h: { url: string }, data: unknown) =>
  expect(
    (await post(h, 'consumer/SendMessage', consumer('Sender'), { Scope: { Scope: 'All' }, Key: 'K', Data: data }))
      .status,
  ).toBe(204);

const dataOf = (frames: unknown[] | undefined) =>
  (frames ?? []).map((f) => ((f as { A: MessageRecord[] }).A[0] as MessageRecord).Data);

describe('long polling', () => {
  it('gives an answer again until the client shows it has it, then never again', async () => {
    const h = await hub({ options: SHORT });
    const c = client(h.url);
    await c.negotiate();
    await c.connectLongPolling();
    await c.start('longPolling');
    const initial = c.cursor;
    await sendAll(h, 'A');
    const first = await c.poll(initial);
    expect(dataOf(first.M)).toEqual(['A']);
    // The answer was lost on the way: the client polls again with the cursor before it.
    await sendAll(h, 'B');
    const again = await c.poll(initial);
    expect(again.C).toBe(first.C);
    expect(dataOf(again.M)).toEqual(['A']);
    // Now it has it: what came after, once.
    const next = await c.poll(first.C);
    expect(dataOf(next.M)).toEqual(['B']);
    const empty = await c.poll(next.C);
    expect(empty.M).toEqual([]);
    expect(empty.C).toBe(next.C);
  });

  it('forgets a connection after DisconnectTimeout without its client', async () => {
    const h = await hub({ options: SHORT });
    const c = client(h.url);
    await c.negotiate();
    await c.connectLongPolling();
    await c.start('longPolling');
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const reply = await c.request('poll', { transport: 'longPolling' }, { messageId: c.cursor ?? '' });
    expect(reply.status).toBe(400);
    expect(reply.json()).toMatchObject({ Code: 'SignalRUnknownConnection' });
  });
});

describe('abort', () => {
  it('ends the connection at once: a request naming it is refused, ping still answers', async () => {
    const h = await hub({ options: SHORT });
    const c = client(h.url);
    await c.negotiate();
    await c.connectLongPolling();
    await c.start('longPolling');
    const aborted = await c.request('abort', { transport: 'longPolling' }, {});
    expect(aborted.status).toBe(200);
    const reply = await c.request('poll', { transport: 'longPolling' }, { messageId: c.cursor ?? '' });
    expect(reply.status).toBe(400);
    expect(reply.json()).toMatchObject({ Code: 'SignalRUnknownConnection' });
    expect((await c.request('ping')).json()).toEqual({ Response: 'pong' });
  });
});

describe('WebSockets', () => {
  it('/reconnect replays what was pushed after the messageId, then what came while away', async () => {
    const h = await hub({ options: SHORT });
    const c = client(h.url);
    await c.negotiate();
    await c.openSocket();
    await c.start('webSockets');
    const before = c.cursor;
    await sendAll(h, 'A');
    await sendAll(h, 'B');
    await until(() => c.of('ReceiveMessage').length === 2);
    c.close();
    await sendAll(h, 'C');
    // As if the frames with A and B had been lost with the socket.
    c.cursor = before;
    c.received.length = 0;
    await c.openSocket('reconnect');
    await until(() => c.of('ReceiveMessage').length === 3);
    expect(c.of('ReceiveMessage').map(([m]) => (m as MessageRecord).Data)).toEqual(['A', 'B', 'C']);
    // Nothing twice: no further frame comes.
    await sendAll(h, 'D');
    await until(() => c.of('ReceiveMessage').length === 4);
    expect(c.of('ReceiveMessage').map(([m]) => (m as MessageRecord).Data)).toEqual(['A', 'B', 'C', 'D']);
  });
});

describe.each(['longPolling', 'webSockets'] as Transport[])(
  'a page over %s through a kill -9 of the hub',
  (transport) => {
    it('comes back by itself and misses nothing that was acknowledged', async () => {
      const dataDir = tempDir();
      // Restarted on the same port: one no outgoing connection can be given while the hub is down.
      const port = String(await stablePort());
      let h = await startHubProcess(dataDir, { HUB_PORT: port });
      const page = new SignalRPage(
        `${h.url}/`,
        { SentinelName: 'Consumer', PackageName: 'Survivor', AccessKey: DEV_KEY },
        { consumerHub: ['receiveMessage'] },
      );
      clients.push(page);
      await page.start(transport);
      const sent: number[] = [];
      for (let i = 0; i < 5; i++) {
        await sendAll(h, i);
        sent.push(i);
      }
      await until(() => page.of('receiveMessage').length >= 1);
      h.proc.kill('SIGKILL');
      await h.exited;
      h = await startHubProcess(dataDir, { HUB_PORT: port });
      for (let i = 5; i < 10; i++) {
        await sendAll(h, i);
        sent.push(i);
      }
      const seen = () => new Set(page.of<MessageRecord>('receiveMessage').map((m) => m.Data as number));
      await until(() => sent.every((i) => seen().has(i)));
      expect(page.connection.state).toBe(1);
      // At least once: a duplicate may only be of what was delivered just before the kill.
      const data = page.of<MessageRecord>('receiveMessage').map((m) => m.Data as number);
      expect(data.filter((d) => d >= 5)).toEqual([5, 6, 7, 8, 9]);
      h.proc.kill('SIGKILL');
      await h.exited;
    }, 60_000);
  },
);
