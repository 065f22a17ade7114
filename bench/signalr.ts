/**
 * Issue 32's table: the SignalR server's WebSocket connections against the REST long-poll, measured in
 * one run, in alternating turns, medians of per-turn ratios. Every client lives in a worker process of
 * its own (bench/signalrClients.ts: raw `ws` connections to ConsumerHub, or REST long-pollers on undici),
 * which also sends the pushes it times; every hub is its own process.
 *  - Wake-up, 1,000 clients each following its own object: from sending the push to the client having
 *    it, p50 and p99; WebSockets (UpdateStateObject) against REST long-polls (GetStateObjects).
 *  - Fan-out, 1,000 clients following one object: from sending the push to the last client having it;
 *    the REST long-pollers re-poll as soon as they have their answer.
 *  - Memory per idle client: the hub's RSS growth per connection (subscribed, nothing to send) against
 *    per waiting long-poll, each on its own connection.
 *  - Push throughput, 64 closed-loop clients: a hub holding 1,000 idle WebSocket connections against
 *    one holding none (and the server CPU per push of each).
 */
import autocannon from 'autocannon';
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { loadAverage } from './floor.js';
import type { Server } from './support.js';
import { cpuMs, median, owned, percentile, pushPath, ROOT, rssOf, sleep, startHubProcess } from './support.js';

export interface SignalrSettings {
  turns: number;
  /** Wake-up samples per subject per turn, fan-out rounds per subject per turn, seconds per throughput run. */
  wakeSamples: number;
  fanRounds: number;
  seconds: number;
  /** Clients per subject (1,000 in the issue). */
  clients: number;
}

/** A row of issue 32's table: SignalR's figure, the baseline's, the median of the per-turn ratios and the goal. */
export interface SignalrRow {
  what: string;
  unit: string;
  signalr: number;
  baseline: number;
  /** What the baseline is. */
  against: string;
  ratio: number;
  /** Issue 32's goal for the ratio, when it sets one. */
  goal?: { ratio: number; at: 'most' | 'least' };
  load: number;
}

export const goalMet = ({ goal, ratio }: SignalrRow) =>
  goal === undefined || (goal.at === 'most' ? ratio <= goal.ratio : ratio >= goal.ratio);

const round = (v: number, places = 2) => Math.round(v * 10 ** places) / 10 ** places;

/** The hubs of this table: SignalR connections uncapped per credential (1,000 share one). */
const startHub = () => startHubProcess({ HUB_SYNC: 'normal', HUB_SIGNALR_MAX_CONNECTIONS_PER_CREDENTIAL: '50000' });

interface Worker {
  ask<T>(command: object, answer: string): Promise<T>;
  close(): Promise<void>;
}

/** bench/signalrClients.ts with `count` clients of `kind` on `hub`, all subscribed (and the REST ones waiting). */
async function clients(hub: Server, kind: 'ws' | 'rest', count: number, shared: boolean): Promise<Worker> {
  const proc: ChildProcess = owned(
    fork(path.join(ROOT, 'bench/signalrClients.ts'), [], { cwd: ROOT, execArgv: ['--import', 'tsx'] }),
  );
  const ask = <T>(command: object, answer: string) =>
    new Promise<T>((resolve, reject) => {
      const listen = (m: { type: string; message?: string }) => {
        if (m.type === 'error') reject(new Error(`${kind} clients: ${m.message}`));
        else if (m.type === answer) resolve(m as T);
        else return;
        proc.off('message', listen);
      };
      proc.on('message', listen);
      proc.send(command);
    });
  await ask({ type: 'open', url: hub.url, kind, count, shared }, 'opened');
  return {
    ask,
    async close() {
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.send({ type: 'close' });
      await exited;
    },
  };
}

/** Median over turns of per-turn ratios a/b. */
const ratioOf = (a: number[], b: number[]) => round(median(a.map((x, i) => x / b[i])));

function row(
  what: string,
  unit: string,
  signalr: number[],
  baseline: number[],
  against: string,
  goal: SignalrRow['goal'],
  loads: number[],
  places = 2,
): SignalrRow {
  return {
    what,
    unit,
    signalr: round(median(signalr), places),
    baseline: round(median(baseline), places),
    against,
    ratio: ratioOf(signalr, baseline),
    goal,
    load: round(median(loads), 1),
  };
}

/** Wake-up, memory and throughput: one hub with 1,000 WebSocket clients, one with 1,000 long-pollers, one with none. */
async function wakeMemoryThroughput(settings: SignalrSettings, log: (row: SignalrRow) => void): Promise<SignalrRow[]> {
  const n = settings.clients;
  const wsHub = await startHub();
  const restHub = await startHub();
  await sleep(500);
  const wsBefore = rssOf(wsHub.pid);
  const restBefore = rssOf(restHub.pid);
  const memoryLoad = loadAverage();
  const ws = await clients(wsHub, 'ws', n, false);
  const rest = await clients(restHub, 'rest', n, false);
  await sleep(1000);
  const perClient = (after: number, before: number) => (after - before) / n / 1024;
  const wsKb = perClient(rssOf(wsHub.pid), wsBefore);
  const restKb = perClient(rssOf(restHub.pid), restBefore);
  const rows: SignalrRow[] = [];
  const add = (r: SignalrRow) => {
    rows.push(r);
    log(r);
  };
  add(
    row(
      `memory per idle client (RSS growth / ${n.toLocaleString('en')})`,
      'KB',
      [wsKb],
      [restKb],
      'a waiting REST long-poll',
      { ratio: 1, at: 'most' },
      [memoryLoad],
      1,
    ),
  );

  const p50 = { ws: [] as number[], rest: [] as number[] };
  const p99 = { ws: [] as number[], rest: [] as number[] };
  const loads: number[] = [];
  for (let turn = 0; turn < settings.turns; turn++) {
    loads.push(loadAverage());
    const samples = { ws: [] as number[], rest: [] as number[] };
    for (let k = 0; k < settings.wakeSamples; k++) {
      // Single samples in alternation, each side first in turn.
      for (const [name, worker] of k % 2
        ? ([
            ['rest', rest],
            ['ws', ws],
          ] as const)
        : ([
            ['ws', ws],
            ['rest', rest],
          ] as const))
        samples[name].push(...(await worker.ask<{ times: number[] }>({ type: 'wake', samples: 1 }, 'woken')).times);
    }
    for (const name of ['ws', 'rest'] as const) {
      p50[name].push(percentile(samples[name], 50));
      p99[name].push(percentile(samples[name], 99));
    }
  }
  const what = (p: string) => `wake-up ${p}, send → client has it (${n.toLocaleString('en')} waiting)`;
  add(row(what('p50'), 'ms', p50.ws, p50.rest, 'REST long-poll', { ratio: 1, at: 'most' }, loads));
  add(row(what('p99'), 'ms', p99.ws, p99.rest, 'REST long-poll', { ratio: 2, at: 'most' }, loads));
  await rest.close();
  await restHub.stop();

  const empty = await startHub();
  const subjects = [
    { name: 'idle' as const, server: wsHub },
    { name: 'none' as const, server: empty },
  ];
  const runPush = async (server: Server, seconds: number) => {
    let k = 0;
    const cpu = cpuMs(server.pid);
    const result = await autocannon({
      url: server.url,
      connections: 64,
      duration: seconds,
      requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: pushPath(k++) }) }],
    });
    if (result.errors > 0 || result.non2xx > 0) throw new Error(`${result.non2xx} non-2xx and ${result.errors} errors`);
    return { rate: result.requests.total / seconds, cpu: ((cpuMs(server.pid) - cpu) * 1000) / result.requests.total };
  };
  for (const s of subjects) await runPush(s.server, 1); // warm-up: JIT, statement cache, WAL file
  const rate = { idle: [] as number[], none: [] as number[] };
  const cpu = { idle: [] as number[], none: [] as number[] };
  const pushLoads: number[] = [];
  for (let turn = 0; turn < settings.turns; turn++) {
    pushLoads.push(loadAverage());
    for (const s of turn % 2 ? [...subjects].reverse() : subjects) {
      const measured = await runPush(s.server, settings.seconds);
      rate[s.name].push(measured.rate);
      cpu[s.name].push(measured.cpu);
    }
  }
  const idle = `${n.toLocaleString('en')} idle WebSocket connections`;
  add(
    row(
      `push throughput, 64 clients, ${idle}`,
      'req/s',
      rate.idle,
      rate.none,
      'no connections',
      { ratio: 0.9, at: 'least' },
      pushLoads,
      0,
    ),
  );
  add(row(`CPU per push, 64 clients, ${idle}`, 'µs', cpu.idle, cpu.none, 'no connections', undefined, pushLoads, 1));
  await ws.close();
  await wsHub.stop();
  await empty.stop();
  return rows;
}

/** Fan-out: 1,000 WebSocket clients of one object against 1,000 long-pollers of it, rounds in alternation. */
async function fanOut(settings: SignalrSettings): Promise<SignalrRow> {
  const n = settings.clients;
  const wsHub = await startHub();
  const restHub = await startHub();
  const ws = await clients(wsHub, 'ws', n, true);
  const rest = await clients(restHub, 'rest', n, true);
  const times = { ws: [] as number[], rest: [] as number[] };
  const loads: number[] = [];
  let round = 0;
  const fan = (worker: Worker) => worker.ask<{ ms: number }>({ type: 'fan', round: round++ }, 'fanned');
  for (const worker of [ws, rest]) await fan(worker); // warm-up
  for (let turn = 0; turn < settings.turns; turn++) {
    loads.push(loadAverage());
    const turnTimes = { ws: [] as number[], rest: [] as number[] };
    for (let r = 0; r < settings.fanRounds; r++) {
      for (const name of (r + turn) % 2 ? (['rest', 'ws'] as const) : (['ws', 'rest'] as const))
        turnTimes[name].push((await fan(name === 'ws' ? ws : rest)).ms);
    }
    times.ws.push(median(turnTimes.ws));
    times.rest.push(median(turnTimes.rest));
  }
  await ws.close();
  await rest.close();
  await wsHub.stop();
  await restHub.stop();
  return row(
    `fan-out, one push → the last of ${n.toLocaleString('en')} clients has it`,
    'ms',
    times.ws,
    times.rest,
    'REST long-pollers re-polling at once',
    { ratio: 0.5, at: 'most' },
    loads,
    1,
  );
}

export async function signalrTable(settings: SignalrSettings, log: (row: SignalrRow) => void): Promise<SignalrRow[]> {
  const rows = await wakeMemoryThroughput(settings, log);
  const fan = await fanOut(settings);
  log(fan);
  return [...rows, fan];
}
