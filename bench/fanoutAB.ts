/**
 * Fan-out and wake-up only, two builds side by side (A/B in alternating turns): wake-up latency at 1,000
 * pollers from the publisher's send (scenario 2), StateObject and message fan-out to 1,000 waiting
 * subscribers (scenarios 3 and 3b, median of 7 rounds), and how many group-commit transactions one
 * StateObject fan-out round took (from hub_batch_pieces). Usage (after `npm run build`, with an older
 * build copied elsewhere inside the repository so it finds node_modules):
 *   node --import tsx bench/fanoutAB.ts dist .old-dist [turns] [only: wake,so,msg]
 * HUB_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`) is passed to the hubs' node.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serializeConfiguration } from '../src/config/xmlFile.js';
import { testConfiguration } from '../test/support/testHub.js';
import { device, httpGet, identity, median, percentile, ROOT, sleep } from './support.js';
import type { Server } from './support.js';

const ADMIN = 'SentinelName=Management&PackageName=Bench&AccessKey=admin-key-0001';
const N = 1000;

async function startBuild(dist: string): Promise<Server> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hub-fanout-'));
  fs.writeFileSync(path.join(dataDir, 'hub.config.xml'), serializeConfiguration(testConfiguration()));
  const nodeArgs = process.env.HUB_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const proc = spawn(process.execPath, [...nodeArgs, path.join(dist, 'src/cli.js')], {
    cwd: ROOT,
    env: {
      ...process.env, HUB_DATA_DIR: dataDir, HUB_PORT: '0', HUB_HOST: '127.0.0.1', HUB_LOG_LEVEL: 'warn',
      HUB_AUTH_FAILURE_DELAY_MS: '0', HUB_MAX_POLLS_PER_CREDENTIAL: '50000', HUB_MAX_SUBSCRIPTIONS_PER_CREDENTIAL: '50000',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /hub listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    proc.on('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
  const stop = () => new Promise<void>((resolve) => {
    if (proc.exitCode !== null) return resolve();
    proc.once('exit', () => resolve());
    proc.kill('SIGTERM');
  });
  return { url, pid: proc.pid as number, stop };
}

async function metric(hub: Server, name: string): Promise<number> {
  const { body } = await httpGet(`${hub.url}/metrics?${ADMIN}`);
  return Number(new RegExp(`^${name} (\\d+)`, 'm').exec(body)?.[1] ?? 0);
}

async function waiting(hub: Server, atLeast: number): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if ((await metric(hub, 'hub_waiting_long_polls')) >= atLeast) return;
    await sleep(100);
  }
  throw new Error(`fewer than ${atLeast} polls waiting`);
}

async function subscribeAll(hub: Server, path_: string, query: (i: number) => string): Promise<string[]> {
  const ids: string[] = new Array(N);
  let next = 0;
  await Promise.all(Array.from({ length: 64 }, async () => {
    while (next < N) {
      const i = next++;
      ids[i] = JSON.parse((await httpGet(`${hub.url}/rest/consumer/${path_}?${query(i)}`)).body) as string;
    }
  }));
  return ids;
}

async function wake(dist: string): Promise<{ p50: number; p99: number }> {
  const hub = await startBuild(dist);
  const ids = await subscribeAll(hub, 'SubscribeToStateObjects', (i) => `${identity.consumer('Bench')}&name=N${i}`);
  const arrived = new Map<number, (t: number) => void>();
  let running = true;
  const devices = ids.map(() => device(hub.url));
  const loops = ids.map(async (id, i) => {
    while (running) {
      const res = await httpGet(`${hub.url}/rest/consumer/GetStateObjects?${identity.consumer('Bench')}&subscriptionId=${id}&timeout=120000`, devices[i]).catch(() => undefined);
      const t = performance.now();
      if (res && res.body !== '[]') arrived.get(i)?.(t);
    }
  });
  await waiting(hub, N);
  await sleep(500);
  const times: number[] = [];
  for (let k = 0; k < 200; k++) {
    const i = Math.floor(Math.random() * N);
    const answered = new Promise<number>((resolve) => arrived.set(i, resolve));
    const sent = performance.now();
    await httpGet(`${hub.url}/rest/platform/PushStateObject?${identity.package}&name=N${i}&value=${k}`);
    times.push((await answered) - sent);
    arrived.delete(i);
    await sleep(5);
  }
  running = false;
  await hub.stop();
  await Promise.allSettled(loops);
  await Promise.allSettled(devices.map((d) => d.destroy()));
  const r = (v: number) => Math.round(v * 100) / 100;
  return { p50: r(percentile(times, 50)), p99: r(percentile(times, 99)) };
}

async function fanOut(dist: string, kind: 'so' | 'msg'): Promise<{ ms: number; all: number[]; txPerRound: number }> {
  const hub = await startBuild(dist);
  const ids = kind === 'so'
    ? await subscribeAll(hub, 'SubscribeToStateObjects', (i) => `${identity.consumer(`G${i}`)}&name=Fan`)
    : await subscribeAll(hub, 'SubscribeToMessage', (i) => identity.consumer(`F${i}`));
  const devices = ids.map(() => device(hub.url));
  const times: number[] = [];
  const txs: number[] = [];
  for (let round = 0; round < 7; round++) {
    const polls = ids.map((id, i) => kind === 'so'
      ? httpGet(`${hub.url}/rest/consumer/GetStateObjects?${identity.consumer(`G${i}`)}&subscriptionId=${id}&timeout=60000`, devices[i])
      : httpGet(`${hub.url}/rest/consumer/GetMessages?${identity.consumer(`F${i}`)}&subscriptionId=${id}&timeout=60000`, devices[i]));
    await waiting(hub, N);
    const before = await metric(hub, 'hub_batch_pieces_count');
    const sent = performance.now();
    await (kind === 'so'
      ? httpGet(`${hub.url}/rest/platform/PushStateObject?${identity.package}&name=Fan&value=${round}`)
      : httpGet(`${hub.url}/rest/consumer/SendMessage?${identity.consumer('Sender')}&scope=All&key=Ping&data=${round}`));
    const replies = await Promise.all(polls.map((p) => p.then((r) => ({ r, t: performance.now() }))));
    if (replies.some(({ r }) => r.body === '[]')) throw new Error('a subscriber missed the write');
    times.push(Math.max(...replies.map(({ t }) => t)) - sent);
    // Minus the metrics read itself (no batch) and the write's own transaction.
    txs.push((await metric(hub, 'hub_batch_pieces_count')) - before - 1);
  }
  await hub.stop();
  await Promise.allSettled(devices.map((d) => d.destroy()));
  return { ms: Math.round(median(times) * 10) / 10, all: times.map((t) => Math.round(t)), txPerRound: median(txs) };
}

const [a = 'dist', b, turnsArg = '3', onlyArg = 'wake,so,msg'] = process.argv.slice(2);
const only = new Set(onlyArg.split(','));
const builds = b ? [a, b] : [a];
for (let turn = 0; turn < Number(turnsArg); turn++) {
  for (const dist of turn % 2 ? [...builds].reverse() : builds) {
    const out: Record<string, unknown> = { turn, dist };
    if (only.has('wake')) out.wake1000 = await wake(dist);
    if (only.has('so')) out.stateObjectFanOut = await fanOut(dist, 'so');
    if (only.has('msg')) out.messageFanOut = await fanOut(dist, 'msg');
    console.log(JSON.stringify(out));
  }
}
