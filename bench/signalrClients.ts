/**
 * A worker of bench/signalr.ts (started with fork, driven over IPC): `count` clients of one hub in a
 * process of their own, so their cost does not sit in the hub's or the driver's. Either raw `ws`
 * WebSocket connections to ConsumerHub (negotiate, connect, start, SubscribeStateObjects) or REST
 * long-pollers (a StateObject subscription each, polled over its own keep-alive connection and re-polled
 * as soon as it answers). Client i follows object `N<i>`, or all follow `Fan`. The worker also sends
 * the pushes it times, so a push and its arrival are read on one clock.
 * Commands: open → opened, wake → woken (ms from sending a push to its client having it, per sample),
 * fan → fanned (ms from sending a push of Fan to the last client having it), close → closed.
 */
import { Client, Pool } from 'undici';
import WebSocket from 'ws';

interface Open {
  type: 'open';
  url: string;
  kind: 'ws' | 'rest';
  count: number;
  shared: boolean;
}
type Command = Open | { type: 'wake'; samples: number } | { type: 'fan'; round: number } | { type: 'close' };

/** Kept free of the other bench modules (and of src/): the same identities as bench/support.ts. */
const KEY = 'dev-key-0001';
const consumer = `SentinelName=Consumer&PackageName=Bench&AccessKey=${KEY}`;
const publisher = `SentinelName=S1&PackageName=P1&AccessKey=${KEY}`;
const admin = 'SentinelName=Management&PackageName=Bench&AccessKey=admin-key-0001';
const HUBS = JSON.stringify([{ Name: 'ConsumerHub' }]);

let setup: Open;
let pool: Pool;
let closing = false;
const sockets: WebSocket[] = [];
const devices: Client[] = [];
/** Told (with performance.now()) when client i next has an update. */
const arrived = new Map<number, (t: number) => void>();
const send = (m: object) => process.send?.(m);

async function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const response = await pool.request({ method: 'GET', path, headers });
  return { status: response.statusCode, body: await response.body.text() };
}

const nameOf = (i: number) => (setup.shared ? 'Fan' : `N${i}`);

/** Runs `work` for 0 … n-1, `limit` at a time. */
async function each(n: number, limit: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < n) await work(next++);
    }),
  );
}

/** One ConsumerHub connection over WebSockets, subscribed to its object; resolves once the subscription is answered. */
async function openSocket(i: number): Promise<void> {
  const headers = { SentinelName: 'Consumer', PackageName: 'Bench', AccessKey: KEY };
  const query = `clientProtocol=1.5&connectionData=${encodeURIComponent(HUBS)}`;
  const negotiated = await get(`/signalr/negotiate?${query}`, headers);
  if (negotiated.status !== 200) throw new Error(`negotiate answered ${negotiated.status}: ${negotiated.body}`);
  const token = encodeURIComponent((JSON.parse(negotiated.body) as { ConnectionToken: string }).ConnectionToken);
  const socket = new WebSocket(
    `${setup.url.replace(/^http/, 'ws')}/signalr/connect?transport=webSockets&${query}&connectionToken=${token}`,
    { headers, perMessageDeflate: false },
  );
  sockets.push(socket);
  let subscribed: (() => void) | undefined;
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.on('message', (data) => {
      const t = performance.now();
      const frame = JSON.parse(String(data)) as { S?: number; I?: string; M?: { M: string }[] };
      if (frame.S === 1) resolve();
      if (frame.I !== undefined) subscribed?.();
      if (frame.M?.some((m) => m.M === 'UpdateStateObject')) arrived.get(i)?.(t);
    });
  });
  const started = await get(`/signalr/start?transport=webSockets&${query}&connectionToken=${token}`, headers);
  if (started.status !== 200) throw new Error(`start answered ${started.status}: ${started.body}`);
  await new Promise<void>((resolve) => {
    subscribed = resolve;
    socket.send(
      JSON.stringify({ H: 'ConsumerHub', M: 'SubscribeStateObjects', A: ['*', '*', nameOf(i), '*'], I: '0' }),
    );
  });
}

/** One REST long-poller: its subscription, then polls on its own connection until closed. */
async function openPoller(i: number): Promise<void> {
  const { status, body } = await get(`/rest/consumer/SubscribeToStateObjects?${consumer}&name=${nameOf(i)}`);
  if (status !== 200) throw new Error(`SubscribeToStateObjects answered ${status}: ${body}`);
  const id = JSON.parse(body) as string;
  const device = new Client(setup.url, { pipelining: 1, headersTimeout: 0, bodyTimeout: 0 });
  devices.push(device);
  void (async () => {
    while (!closing) {
      const answer = await device
        .request({
          method: 'GET',
          path: `/rest/consumer/GetStateObjects?${consumer}&subscriptionId=${id}&timeout=120000`,
        })
        .then((r) => r.body.text())
        .catch(() => undefined);
      const t = performance.now();
      if (answer !== undefined && answer !== '[]') arrived.get(i)?.(t);
    }
  })();
}

/** Until every REST poller waits in the hub (its metrics), a minute at most. */
async function untilPolling(): Promise<void> {
  for (let k = 0; k < 1200; k++) {
    const { body } = await get(`/metrics?${admin}`);
    if (Number(/hub_waiting_long_polls (\d+)/.exec(body)?.[1] ?? 0) >= setup.count) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`fewer than ${setup.count} polls waiting`);
}

const push = async (name: string, value: number) => {
  const { status } = await get(`/rest/platform/PushStateObject?${publisher}&name=${name}&value=${value}`);
  if (status !== 204) throw new Error(`push answered ${status}`);
};

let pushes = 0;

async function wake(samples: number): Promise<number[]> {
  const times: number[] = [];
  for (let k = 0; k < samples; k++) {
    if (setup.kind === 'rest') await untilPolling();
    const i = Math.floor(Math.random() * setup.count);
    const answered = new Promise<number>((resolve) => arrived.set(i, resolve));
    const sent = performance.now();
    await push(`N${i}`, pushes++);
    times.push((await answered) - sent);
    arrived.delete(i);
  }
  return times;
}

async function fan(round: number): Promise<number> {
  if (setup.kind === 'rest') await untilPolling();
  const all = Array.from({ length: setup.count }, (_, i) => new Promise<number>((resolve) => arrived.set(i, resolve)));
  const sent = performance.now();
  await push('Fan', round);
  const last = Math.max(...(await Promise.all(all)));
  arrived.clear();
  return last - sent;
}

async function handle(command: Command): Promise<void> {
  switch (command.type) {
    case 'open':
      setup = command;
      pool = new Pool(command.url, { connections: 32 });
      await each(command.count, 32, command.kind === 'ws' ? openSocket : openPoller);
      if (command.kind === 'rest') await untilPolling();
      return void send({ type: 'opened' });
    case 'wake':
      return void send({ type: 'woken', times: await wake(command.samples) });
    case 'fan':
      return void send({ type: 'fanned', ms: await fan(command.round) });
    case 'close':
      closing = true;
      for (const socket of sockets) socket.terminate();
      await Promise.allSettled(devices.map((d) => d.destroy()));
      await pool.destroy();
      send({ type: 'closed' });
      return process.exit(0);
  }
}

process.on('message', (command: Command) => {
  handle(command).catch((error: unknown) => {
    send({ type: 'error', message: String(error instanceof Error ? error.stack : error) });
  });
});
