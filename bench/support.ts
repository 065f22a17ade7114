/** Processes, clients and statistics shared by the benchmark scenarios. */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { Dispatcher } from 'undici';
import { Client, Pool } from 'undici';
import { serializeConfiguration } from '../src/config/xmlFile.js';
import { testConfiguration } from '../test/support/testHub.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface Server {
  url: string;
  pid: number;
  /** A hub's data directory (startHubProcess). */
  dataDir?: string;
  /** Stops it; a hub's data directory, if startHubProcess made it, goes too unless `keepData` (to start another on it). */
  stop(keepData?: boolean): Promise<void>;
}

function waitForListening(proc: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout?.on('data', (chunk: Buffer) => {
      if (process.env.ECHO) process.stdout.write(chunk);
      out += chunk.toString();
      const match = pattern.exec(out);
      if (match) resolve(match[1]);
    });
    proc.stderr?.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    proc.on('exit', (code) => reject(new Error(`process exited with ${code}: ${out}`)));
  });
}

/** Every child started here is killed when this process ends, however it ends (a failed or interrupted run leaves no hub behind). */
const children = new Set<ChildProcess>();
/** The hubs' temp directories, removed once their hub has stopped or when this process ends. */
const dataDirs = new Set<string>();
process.once('exit', () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

/** Registers `proc` with the children killed when this process ends. */
export function owned<T extends ChildProcess>(proc: T): T {
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  return proc;
}

function stopper(proc: ChildProcess): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      if (proc.exitCode !== null) return resolve();
      proc.once('exit', () => resolve());
      proc.kill('SIGTERM');
    });
}

/**
 * A hub in its own process, from a production build (`dist`, which `npm run bench` builds first; the A/B
 * tools pass an older build's directory), on a fresh temp directory with the test configuration, or on
 * `dataDir`, a stopped hub's (`stop(true)`). Only a directory made here is ever removed.
 */
export async function startHubProcess(
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
  dist = 'dist',
  dataDir = '',
): Promise<Server> {
  const made = !dataDir || dataDirs.has(dataDir);
  if (!dataDir) {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hub-bench-'));
    fs.writeFileSync(path.join(dataDir, 'hub.config.xml'), serializeConfiguration(testConfiguration()));
  }
  const proc = owned(
    spawn(process.execPath, [...nodeArgs, path.join(dist, 'src/cli.js')], {
      cwd: ROOT,
      env: {
        ...process.env,
        HUB_DATA_DIR: dataDir,
        HUB_PORT: '0',
        HUB_HOST: '127.0.0.1',
        HUB_LOG_LEVEL: 'warn',
        HUB_AUTH_FAILURE_DELAY_MS: '0',
        HUB_MAX_POLLS_PER_CREDENTIAL: '50000',
        HUB_MAX_SUBSCRIPTIONS_PER_CREDENTIAL: '50000',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  if (made) dataDirs.add(dataDir);
  const url = await waitForListening(proc, /hub listening on (http:\/\/\S+)/);
  const stop = stopper(proc);
  return {
    url,
    pid: proc.pid as number,
    dataDir,
    async stop(keepData = false) {
      await stop();
      if (keepData || !made) return;
      fs.rmSync(dataDir, { recursive: true, force: true });
      dataDirs.delete(dataDir);
    },
  };
}

/** bench/bareKoa.ts: 204 to everything, or with `commit` 204 once the request's push is committed. */
export async function startBareKoa(mode: 'plain' | 'commit' = 'plain'): Promise<Server> {
  const proc = owned(
    spawn(process.execPath, ['--import', 'tsx', 'bench/bareKoa.ts', ...(mode === 'commit' ? ['commit'] : [])], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const url = await waitForListening(proc, /bare koa listening on (http:\/\/\S+)/);
  return { url, pid: proc.pid as number, stop: stopper(proc) };
}

/** Resident set size of a process, in bytes. */
export function rssOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb * 1024;
}

/** The shared PostgreSQL server the benchmarks create their databases on. */
export const BENCH_ADMIN_URL = process.env.HUB_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** CPU milliseconds (user + system, every thread) a process has used, from /proc/<pid>/stat; 0 once it is gone. */
export function cpuMs(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in USER_HZ (100)
  } catch {
    return 0;
  }
}

/**
 * A process's proportional set size in bytes: its private pages plus its share of pages it shares
 * (the code and libraries every hub process maps). Summed over processes it counts each page once,
 * where summed RSS counts a shared page once per process.
 */
export function pssOf(pid: number): number {
  const rollup = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
  return kb * 1024;
}

/** Keep-alive connection pools by origin, without a connection cap: one connection per outstanding request. */
const pools = new Map<string, Pool>();

/**
 * One simulated device: its own keep-alive connection. The long-poll scenarios give each poller one,
 * as each real device has its own. undici, because a thousand simulated subscribers share this one
 * process: Node's http client spent ~40 µs per response here, which fan-out would charge to the hub.
 */
export const device = (origin: string): Client =>
  new Client(origin, { pipelining: 1, headersTimeout: 0, bodyTimeout: 0 });

/** A GET (through `via`, else a shared pool); resolves with status and body. */
export const httpGet = (url: string, via?: Dispatcher) => httpRequest(url, via);

/** A POST of `body` through the shared pool (as cheap for the client as httpGet, unlike fetch). */
export const httpPost = (url: string, body: string) => httpRequest(url, undefined, body);

async function httpRequest(url: string, via?: Dispatcher, body?: string): Promise<{ status: number; body: string }> {
  const { origin, pathname, search } = new URL(url);
  let dispatcher = via ?? pools.get(origin);
  if (!dispatcher) pools.set(origin, (dispatcher = new Pool(origin, { connections: null, pipelining: 1 })));
  const response = await dispatcher.request({
    method: body === undefined ? 'GET' : 'POST',
    path: pathname + search,
    body,
  });
  return { status: response.statusCode, body: await response.body.text() };
}

export const median = (values: number[]) => percentile(values, 50);

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

export { sleep };

export const identity = {
  consumer: (name: string) => `SentinelName=Consumer&PackageName=${encodeURIComponent(name)}&AccessKey=dev-key-0001`,
  package: 'SentinelName=S1&PackageName=P1&AccessKey=dev-key-0001',
  admin: 'SentinelName=Management&PackageName=Bench&AccessKey=admin-key-0001',
};

/** A push of value `n` to one of 100 names, for load generators (each request its own value). */
export const pushPath = (n: number) => `/rest/platform/PushStateObject?${identity.package}&name=K${n % 100}&value=${n}`;

/** Until at least `atLeast` long-polls wait in the hub (its metrics), a minute at most. */
export async function waitingPolls(hub: Server, atLeast: number): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const { body } = await httpGet(`${hub.url}/metrics?${identity.admin}`);
    if (Number(/hub_waiting_long_polls (\d+)/.exec(body)?.[1] ?? 0) >= atLeast) return;
    await sleep(100);
  }
  throw new Error(`fewer than ${atLeast} polls waiting`);
}

/**
 * `n` subscriptions (`action`: SubscribeToStateObjects or SubscribeToMessage), 64 requests at a time,
 * subscription i through `hub` (or `hub(i)`); their ids. A refused subscription fails the benchmark.
 */
export async function subscribeEach(
  hub: Server | ((i: number) => Server),
  n: number,
  action: string,
  query: (i: number) => string,
): Promise<string[]> {
  const ids: string[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < n) {
        const i = next++;
        const { url } = typeof hub === 'function' ? hub(i) : hub;
        const { status, body } = await httpGet(`${url}/rest/consumer/${action}?${query(i)}`);
        if (status !== 200) throw new Error(`${action} answered ${status}: ${body}`);
        ids[i] = JSON.parse(body) as string;
      }
    }),
  );
  return ids;
}

export interface ObjectPollers {
  /** Set `arrived.set(i, resolve)` to be told (with performance.now()) when poller i's next non-empty answer arrives. */
  arrived: Map<number, (t: number) => void>;
  /** Stops polling, stops the hub (which answers the waiting polls) and closes the devices. */
  close(): Promise<void>;
}

/**
 * Scenario 2's samples: `iterations` times, a push through `pushTo` to a random one of the `n` objects
 * `arrived` follows (pollEachObject); ms from its 204 and from its sending to that poller's answer.
 */
export async function sampleWakeUps(
  pushTo: Server,
  arrived: ObjectPollers['arrived'],
  n: number,
  iterations: number,
): Promise<{ fromAck: number[]; fromSend: number[] }> {
  const fromAck: number[] = [];
  const fromSend: number[] = [];
  for (let k = 0; k < iterations; k++) {
    const i = Math.floor(Math.random() * n);
    const answered = new Promise<number>((resolve) => arrived.set(i, resolve));
    const sent = performance.now();
    await httpGet(`${pushTo.url}/rest/platform/PushStateObject?${identity.package}&name=N${i}&value=${k}`);
    const acked = performance.now();
    const t = await answered;
    arrived.delete(i);
    fromAck.push(t - acked);
    fromSend.push(t - sent);
    await sleep(5);
  }
  return { fromAck, fromSend };
}

/** Scenario 2's pollers: each StateObject subscription long-polled (2 min) by its own device, over and over. */
export function pollEachObject(hub: Server, ids: string[]): ObjectPollers {
  const arrived = new Map<number, (t: number) => void>();
  let running = true;
  const devices = ids.map(() => device(hub.url));
  const loops = ids.map(async (id, i) => {
    while (running) {
      const res = await httpGet(
        `${hub.url}/rest/consumer/GetStateObjects?${identity.consumer('Bench')}&subscriptionId=${id}&timeout=120000`,
        devices[i],
      ).catch(() => undefined);
      const t = performance.now();
      if (res && res.body !== '[]') arrived.get(i)?.(t);
    }
  });
  return {
    arrived,
    async close() {
      running = false;
      await hub.stop();
      await Promise.allSettled(loops);
      await Promise.allSettled(devices.map((d) => d.destroy()));
    },
  };
}

/**
 * Scenario 5 on a running hub: 8 senders → 1 polling subscriber for `seconds`; what was acknowledged
 * (204), what the subscriber received, and messages received per second.
 */
export async function messageThroughput(
  hub: Server,
  seconds: number,
): Promise<{ perSecond: number; acked: number; received: number }> {
  const sub = JSON.parse(
    (await httpGet(`${hub.url}/rest/consumer/SubscribeToMessage?${identity.consumer('Sink')}`)).body,
  ) as string;
  let received = 0;
  let acked = 0;
  let sending = true;
  const started = performance.now();
  const until = Date.now() + seconds * 1000;
  const senders = Array.from({ length: 8 }, async () => {
    while (Date.now() < until) {
      const res = await httpGet(
        `${hub.url}/rest/platform/SendMessage?${identity.package}&scope=Package&args=Consumer/Sink&key=M&data=1`,
      );
      if (res.status === 204) acked++;
    }
  });
  const receiver = (async () => {
    while (sending || received < acked) {
      const { body } = await httpGet(
        `${hub.url}/rest/consumer/GetMessages?${identity.consumer('Sink')}&subscriptionId=${sub}&timeout=1000&limit=0`,
      );
      received += (JSON.parse(body) as unknown[]).length;
    }
  })();
  await Promise.all(senders);
  sending = false;
  await receiver;
  return { perSecond: Math.round(received / ((performance.now() - started) / 1000)), acked, received };
}
