/**
 * Issue 33's table: the hub's REST hot path against the floor of its own stack and against Nchan, each
 * figure with the baselines measured in the same run, in alternating turns, medians of per-turn ratios.
 *  - CPU per push (server side, from /proc, 64 closed-loop clients): the hub against bare Koa answering
 *    204, bare Koa storing each push as the hub does before its 204 (bench/bareKoa.ts) and Nchan publishing.
 *  - Wake-up, 1,000 devices each waiting on its own object: from sending the push to the device's
 *    answer, p50 and p99; against bare Koa + commit holding polls and answering them after the write's
 *    commit (bench/bareKoaLongPoll.ts: the floor with the hub's promises), a bare Node server answering
 *    held polls from memory (bench/bareLongPoll.ts) and Nchan. All subjects up at once, single samples
 *    in alternation after warm-up samples not counted.
 *  - Fan-out, 1,000 devices waiting on one object (StateObjects) or for a message to All: from sending
 *    the write to the last device answered, every device re-polling as soon as it has its answer (as
 *    real ones do, so the re-polls compete with the answers still to write). Rounds in alternation;
 *    the same baselines as wake-up.
 *  - Memory per idle waiting device: the RSS the server grows by per waiting poll, one subject at a time;
 *    the hub's minus bare Node's is what a waiting poll holds beyond Node's own socket and request.
 * A hub of an older build (`before`, a dist directory inside the repository) runs beside the current one
 * in every turn. Nchan runs when nginx and its module are installed (bench/nchan.ts); the rows say when not.
 */
import autocannon from 'autocannon';
import fs from 'node:fs';
import { spawn } from 'node:child_process';
import type { Client } from 'undici';
import type { Nchan } from './nchan.js';
import { startNchan } from './nchan.js';
import type { Server } from './support.js';
import {
  cpuMs,
  device,
  httpGet,
  httpPost,
  identity,
  median,
  owned,
  percentile,
  pushPath,
  ROOT,
  rssOf,
  sleep,
  startBareKoa,
  startHubProcess,
  subscribeEach,
} from './support.js';

export interface FloorSettings {
  /** Turns of the push measure (each subject once per turn), wake-up samples and fan-out rounds per subject. */
  turns: number;
  wakeSamples: number;
  fanoutRounds: number;
  /** Waiting devices for the memory measure. */
  idleDevices: number;
  /** An older build's dist directory to measure beside the current one, or undefined. */
  before?: string;
  /** Some of the measures only: push, wake, fanout-msg, fanout-so, memory. */
  only?: string[];
}

/** Node options for the current build's hub only (BENCH_HUB_NODE_ARGS, e.g. `--cpu-prof`): to profile it in place. */
const hubNodeArgs = () => process.env.BENCH_HUB_NODE_ARGS?.split(' ').filter(Boolean) ?? [];

/** One figure of one subject: its median and the one-minute load average when it was measured. */
export interface Figure {
  value: number;
  load: number;
}

/** A row of issue 33's table: the figure of each subject measured, and the hub's per-turn ratios. */
export interface FloorRow {
  what: string;
  unit: string;
  /** By subject: 'hub', 'before' (the older build), 'koa', 'commit' (bare Koa + the push's commit), 'node' (bare Node), 'nchan'. */
  figures: Partial<Record<Subject, Figure>>;
  /** Medians of the per-turn ratios of the hub (and of the older build) to each baseline. */
  ratios: Partial<Record<`${'hub' | 'before'}/${Baseline}`, number>>;
  /**
   * Issue 33's goal: the hub's ratio to `against` at most `max`; `floor`, the same ratio of bare Koa +
   * commit (the least a server on the hub's stack does to keep the hub's promises), when it ran.
   */
  goal?: { against: Baseline; max: number; floor?: number };
  note?: string;
}

type Baseline = 'koa' | 'commit' | 'node' | 'nchan' | 'before';
export type Subject = 'hub' | 'before' | 'koa' | 'commit' | 'node' | 'nchan';

export const loadAverage = () => Number(fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
const round = (v: number, places = 2) => Math.round(v * 10 ** places) / 10 ** places;

function waitForLine(proc: ReturnType<typeof spawn>, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = pattern.exec(out);
      if (match) resolve(match[1]);
    });
    proc.on('exit', (code) => reject(new Error(`exited with ${code}: ${out}`)));
  });
}

/** bench/bareLongPoll.ts (bare Node) or bench/bareKoaLongPoll.ts (bare Koa + commit) as its own process, as the hub is. */
async function startBareLongPoll(script: 'bareLongPoll' | 'bareKoaLongPoll'): Promise<Server> {
  const proc = owned(
    spawn(process.execPath, ['--import', 'tsx', `bench/${script}.ts`], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
  const url = await waitForLine(proc, /long-poll listening on (http:\/\/\S+)/);
  return {
    url,
    pid: proc.pid as number,
    stop: () =>
      new Promise((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
      }),
  };
}

/**
 * A subject of the long-poll measures: where device i polls, how a write reaches channel `target`
 * (one device's own, or 'Fan' for all), and how many polls wait.
 */
interface LongPollSubject {
  name: Subject;
  server: Server;
  /** Subscribes what `n` devices need (the hub's subscriptions); their poll paths. */
  prepare(n: number, shared: boolean): Promise<string[]>;
  write(channel: number | 'Fan', k: number): Promise<void>;
  waiting(): Promise<number>;
  /** Devices echo the validators of their last answer (Nchan and bare Node: never miss a message). */
  conditional: boolean;
}

function hubSubject(name: 'hub' | 'before', server: Server, kind: 'so' | 'msg'): LongPollSubject {
  const waiting = async () => {
    const { body } = await httpGet(`${server.url}/metrics?${identity.admin}`);
    return Number(/hub_waiting_long_polls (\d+)/.exec(body)?.[1] ?? 0);
  };
  return {
    name,
    server,
    conditional: false,
    async prepare(n, shared) {
      if (kind === 'msg') {
        const ids = await subscribeEach(server, n, 'SubscribeToMessage', (i) => identity.consumer(`F${i}`));
        return ids.map(
          (id, i) => `/rest/consumer/GetMessages?${identity.consumer(`F${i}`)}&subscriptionId=${id}&timeout=120000`,
        );
      }
      const ids = await subscribeEach(
        server,
        n,
        'SubscribeToStateObjects',
        (i) => `${identity.consumer(`G${i}`)}&name=${shared ? 'Fan' : `N${i}`}`,
      );
      return ids.map(
        (id, i) => `/rest/consumer/GetStateObjects?${identity.consumer(`G${i}`)}&subscriptionId=${id}&timeout=120000`,
      );
    },
    async write(channel, k) {
      const { status } = await httpGet(
        kind === 'msg'
          ? `${server.url}/rest/consumer/SendMessage?${identity.consumer('Sender')}&scope=All&key=Ping&data=${k}`
          : `${server.url}/rest/platform/PushStateObject?${identity.package}&name=${channel === 'Fan' ? 'Fan' : `N${channel}`}&value=${k}`,
      );
      if (status !== 204) throw new Error(`the hub answered a write with ${status}`);
    },
    waiting,
  };
}

/**
 * Bare Node (`node`: the device sends its position, as with Nchan) or bare Koa + commit (`commit`: the
 * server keeps each device's position, as the hub keeps a subscription's cursor).
 */
function bareSubject(name: 'node' | 'commit', server: Server): LongPollSubject {
  const device = (i: number) => (name === 'commit' ? `/${i}` : '');
  return {
    name,
    server,
    conditional: name === 'node',
    prepare: (n, shared) =>
      Promise.resolve(Array.from({ length: n }, (_, i) => `/sub/${shared ? 'Fan' : `N${i}`}${device(i)}`)),
    async write(channel, k) {
      await httpGet(`${server.url}/pub/${channel === 'Fan' ? 'Fan' : `N${channel}`}?data=${k}`);
    },
    waiting: async () => Number((await httpGet(`${server.url}/waiting`)).body),
  };
}

function nchanSubject(server: Nchan): LongPollSubject {
  return {
    name: 'nchan',
    server,
    conditional: true,
    prepare: (n, shared) => Promise.resolve(Array.from({ length: n }, (_, i) => `/sub/${shared ? 'Fan' : `N${i}`}`)),
    async write(channel, k) {
      const { status } = await httpPost(`${server.url}/pub/${channel === 'Fan' ? 'Fan' : `N${channel}`}`, String(k));
      if (status !== 201 && status !== 202) throw new Error(`Nchan answered a publish with ${status}`);
    },
    waiting: () => server.waiting(),
  };
}

/**
 * `n` devices, each its own keep-alive connection, polling `paths` over and over: each re-polls as soon
 * as it has its answer. `arrived(i, t)` hears of every non-empty answer.
 */
function devices(subject: LongPollSubject, paths: string[], arrived: (i: number, t: number) => void) {
  let running = true;
  const clients: Client[] = paths.map(() => device(subject.server.url));
  const loops = paths.map(async (path, i) => {
    const validators: Record<string, string> = {};
    while (running) {
      try {
        const response = await clients[i].request({ method: 'GET', path, headers: validators });
        const body = await response.body.text();
        const t = performance.now();
        if (subject.conditional) {
          const etag = response.headers.etag;
          const modified = response.headers['last-modified'];
          if (typeof etag === 'string') validators['if-none-match'] = etag;
          if (typeof modified === 'string') validators['if-modified-since'] = modified;
        }
        if (response.statusCode === 200 && body !== '[]') arrived(i, t);
      } catch {
        if (running) await sleep(10);
      }
    }
  });
  return {
    async close() {
      running = false;
      await Promise.allSettled(clients.map((c) => c.destroy()));
      await Promise.allSettled(loops);
    },
  };
}

async function untilWaiting(subject: LongPollSubject, n: number): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if ((await subject.waiting()) >= n) return;
    await sleep(50);
  }
  throw new Error(`${subject.name}: fewer than ${n} polls waiting`);
}

/** Median over turns of per-turn ratios a/b. */
const ratioOf = (a: number[], b: number[]) => round(median(a.map((x, i) => x / b[i])));

function ratiosAgainst(values: Partial<Record<Subject, number[]>>, baselines: Baseline[]) {
  const ratios: FloorRow['ratios'] = {};
  // The current build against the older one, turn by turn, when both ran.
  if (values.hub && values.before) ratios['hub/before'] = ratioOf(values.hub, values.before);
  for (const side of ['hub', 'before'] as const) {
    const mine = values[side];
    if (!mine) continue;
    for (const base of baselines) {
      const theirs = values[base];
      if (theirs) ratios[`${side}/${base}`] = ratioOf(mine, theirs);
    }
  }
  return ratios;
}

/** A row's goal, with the ratio bare Koa + commit reaches against the same baseline when it ran. */
function goalOf(values: Partial<Record<Subject, number[]>>, against: Baseline, max: number): FloorRow['goal'] {
  const floor = values.commit && values[against] ? ratioOf(values.commit, values[against]) : undefined;
  return { against, max, floor };
}

/** Rotates `items` by `turn`: each subject goes first in turn. */
const rotated = <T>(items: T[], turn: number) => items.map((_, i) => items[(i + turn) % items.length]);

/** CPU per push: 64 closed-loop clients for 3 s per subject per turn; server CPU (µs) per request. */
async function cpuPerPush(settings: FloorSettings, nchan: Nchan | undefined): Promise<FloorRow> {
  const koa = await startBareKoa();
  const commit = await startBareKoa('commit');
  const hub = await startHubProcess({ HUB_SYNC: 'normal' }, hubNodeArgs());
  const before = settings.before ? await startHubProcess({ HUB_SYNC: 'normal' }, [], settings.before) : undefined;
  const subjects: {
    name: Subject;
    server: Server;
    request: (n: number) => { path: string; method: 'GET' | 'POST'; body?: string };
  }[] = [
    { name: 'koa', server: koa, request: () => ({ method: 'GET', path: '/rest/platform/PushStateObject' }) },
    { name: 'commit', server: commit, request: (n) => ({ method: 'GET', path: pushPath(n) }) },
    { name: 'hub', server: hub, request: (n) => ({ method: 'GET', path: pushPath(n) }) },
  ];
  if (before) subjects.push({ name: 'before', server: before, request: (n) => ({ method: 'GET', path: pushPath(n) }) });
  if (nchan)
    subjects.push({
      name: 'nchan',
      server: nchan,
      request: (n) => ({ method: 'POST', path: `/pub/K${n % 100}`, body: String(n) }),
    });
  const run = async (subject: (typeof subjects)[number], seconds: number) => {
    let n = 0;
    const cpu = cpuMs(subject.server.pid);
    const result = await autocannon({
      url: subject.server.url,
      connections: 64,
      duration: seconds,
      requests: [{ setupRequest: (req) => ({ ...req, ...subject.request(n++) }) }],
    });
    if (result.errors > 0 || result.non2xx > 0)
      throw new Error(`${subject.name}: ${result.non2xx} non-2xx and ${result.errors} errors`);
    return ((cpuMs(subject.server.pid) - cpu) * 1000) / result.requests.total;
  };
  for (const subject of subjects) await run(subject, 1); // warm-up: JIT, statement cache, WAL file
  const values: Partial<Record<Subject, number[]>> = {};
  const loads: number[] = [];
  for (let turn = 0; turn < settings.turns; turn++) {
    loads.push(loadAverage());
    for (const subject of rotated(subjects, turn)) (values[subject.name] ??= []).push(await run(subject, 3));
  }
  for (const s of subjects) await s.server.stop();
  return {
    what: 'CPU per push (server side, 64 clients)',
    unit: 'µs',
    figures: figures(values, loads, 1),
    ratios: ratiosAgainst(values, ['koa', 'commit', 'nchan']),
    goal: goalOf(values, 'koa', 1.2),
  };
}

function figures(values: Partial<Record<Subject, number[]>>, loads: number[], places: number) {
  const load = round(median(loads), 1);
  return Object.fromEntries(
    Object.entries(values).map(([name, v]) => [name, { value: round(median(v), places), load }]),
  ) as FloorRow['figures'];
}

interface Started {
  subjects: LongPollSubject[];
  stop(): Promise<void>;
}

/** The long-poll subjects: the hub (and the older build) on `kind`, bare Node, Nchan. */
async function longPollSubjects(
  settings: FloorSettings,
  kind: 'so' | 'msg',
  nchan: Nchan | undefined,
): Promise<Started> {
  const hub = await startHubProcess({ HUB_SYNC: 'normal' }, hubNodeArgs());
  const subjects = [hubSubject('hub', hub, kind)];
  if (settings.before)
    subjects.push(hubSubject('before', await startHubProcess({ HUB_SYNC: 'normal' }, [], settings.before), kind));
  subjects.push(bareSubject('commit', await startBareLongPoll('bareKoaLongPoll')));
  subjects.push(bareSubject('node', await startBareLongPoll('bareLongPoll')));
  if (nchan) subjects.push(nchanSubject(nchan));
  return {
    subjects,
    async stop() {
      for (const s of subjects) if (s.name !== 'nchan') await s.server.stop();
    },
  };
}

const N = 1000;

/** Wake-up samples not counted, per subject: the write and wake-up paths run until the JIT has optimised them. */
export const WARM_SAMPLES = 300;

/** Wake-up: each subject's 1,000 devices wait on their own channels; a write to one at random, in alternation. */
async function wakeUp(settings: FloorSettings, nchan: Nchan | undefined): Promise<FloorRow[]> {
  const { subjects, stop } = await longPollSubjects(settings, 'so', nchan);
  const times: Partial<Record<Subject, number[]>> = {};
  const running = [];
  for (const subject of subjects) {
    const paths = await subject.prepare(N, false);
    const waiters = new Map<number, (t: number) => void>();
    const polling = devices(subject, paths, (i, t) => waiters.get(i)?.(t));
    await untilWaiting(subject, N);
    running.push({ subject, waiters, polling });
  }
  const loads: number[] = [];
  await sleep(500);
  for (let k = -WARM_SAMPLES; k < settings.wakeSamples; k++) {
    if (k % 50 === 0) loads.push(loadAverage());
    for (const { subject, waiters } of rotated(running, k + WARM_SAMPLES)) {
      const i = Math.floor(Math.random() * N);
      const answered = new Promise<number>((resolve) => waiters.set(i, resolve));
      const sent = performance.now();
      await subject.write(i, k);
      const t = await answered;
      waiters.delete(i);
      if (k >= 0) (times[subject.name] ??= []).push(t - sent);
      await sleep(3);
    }
  }
  for (const { polling } of running) await polling.close();
  await stop();
  const at = (p: number) =>
    Object.fromEntries(Object.entries(times).map(([name, v]) => [name, [percentile(v, p)]])) as Partial<
      Record<Subject, number[]>
    >;
  return [50, 99].map((p) => ({
    what: `wake-up p${p}, send → device answered (1,000 waiting)`,
    unit: 'ms',
    figures: figures(at(p), loads, 2),
    ratios: ratiosAgainst(at(p), ['commit', 'node', 'nchan']),
    goal: p === 50 ? goalOf(at(p), 'nchan', 1.5) : undefined,
  }));
}

/** Rounds not counted: a hub's first rounds take 2–4× longer (its heap grows, code is optimised). */
export const WARM_ROUNDS = 2;

/**
 * Fan-out rounds per turn and subject (each round ~40–50 ms): at 20 the floor's ratio to Nchan stays
 * within a few % between runs, where at 4 it moved by ~20 % (benchmark notes).
 */
export const FANOUT_ROUNDS_PER_TURN = 20;

/** Fan-out: 1,000 devices on one channel, one write, until the last has it; rounds in alternation. */
async function fanOut(settings: FloorSettings, kind: 'so' | 'msg', nchan: Nchan | undefined): Promise<FloorRow> {
  const { subjects, stop } = await longPollSubjects(settings, kind, nchan);
  const running = [];
  for (const subject of subjects) {
    const paths = await subject.prepare(N, true);
    let count = 0;
    let last = 0;
    let done: (() => void) | undefined;
    const polling = devices(subject, paths, (_i, t) => {
      last = t;
      if (++count === N) done?.();
    });
    await untilWaiting(subject, N);
    const round = async (k: number) => {
      count = 0;
      const all = new Promise<void>((resolve) => (done = resolve));
      const sent = performance.now();
      await subject.write('Fan', k);
      await all;
      const ms = last - sent;
      await untilWaiting(subject, N);
      return ms;
    };
    running.push({ subject, polling, round });
  }
  const values: Partial<Record<Subject, number[]>> = {};
  const loads: number[] = [];
  const rounds = WARM_ROUNDS + settings.fanoutRounds;
  for (let k = 0; k < rounds; k++) {
    loads.push(loadAverage());
    for (const { subject, round } of rotated(running, k)) {
      const ms = await round(k);
      if (k >= WARM_ROUNDS) (values[subject.name] ??= []).push(ms);
    }
  }
  for (const { polling } of running) await polling.close();
  await stop();
  return {
    what: `fan-out, one ${kind === 'so' ? 'push' : 'send to All'} → the last of 1,000 devices answered (${kind === 'so' ? 'StateObjects' : 'messages'})`,
    unit: 'ms',
    figures: figures(values, loads, 1),
    ratios: ratiosAgainst(values, ['commit', 'node', 'nchan']),
    goal: goalOf(values, 'nchan', 1.2),
  };
}

/** Memory per idle waiting device: RSS growth per waiting poll, one subject at a time. */
async function idleMemory(settings: FloorSettings, nchan: boolean): Promise<FloorRow> {
  const n = settings.idleDevices;
  const values: Partial<Record<Subject, number[]>> = {};
  const loads: number[] = [];
  const order: Subject[] = [
    'hub',
    ...(settings.before ? (['before'] as const) : []),
    'node',
    ...(nchan ? (['nchan'] as const) : []),
  ];
  const turns = Math.max(2, Math.ceil(settings.turns / 2));
  for (let turn = 0; turn < turns; turn++) {
    for (const name of rotated(order, turn)) {
      loads.push(loadAverage());
      let subject: LongPollSubject;
      if (name === 'hub' || name === 'before')
        subject = hubSubject(
          name,
          await startHubProcess({ HUB_SYNC: 'normal' }, [], name === 'before' ? settings.before : 'dist'),
          'so',
        );
      else if (name === 'node') subject = bareSubject('node', await startBareLongPoll('bareLongPoll'));
      else {
        // A fresh nginx each turn: what an earlier turn's polls left allocated would be reused.
        const fresh = await startNchan();
        if ('missing' in fresh) throw new Error(fresh.missing);
        subject = nchanSubject(fresh);
      }
      const paths = await subject.prepare(n, false);
      await sleep(300);
      const rss = rssOf(subject.server.pid);
      const polling = devices(subject, paths, () => undefined);
      await untilWaiting(subject, n);
      await sleep(500);
      (values[name] ??= []).push((rssOf(subject.server.pid) - rss) / n / 1024);
      await polling.close();
      await subject.server.stop();
    }
  }
  return {
    what: `memory per idle waiting device (RSS growth / ${n.toLocaleString('en')})`,
    unit: 'KB',
    figures: figures(values, loads, 1),
    ratios: ratiosAgainst(values, ['node', 'nchan']),
    goal: { against: 'nchan', max: 1 },
  };
}

/** Issue 33's table, every row; Nchan's column empty (with the reason) when it is not installed. */
export async function floorTable(settings: FloorSettings, log: (row: FloorRow) => void): Promise<FloorRow[]> {
  const rows: FloorRow[] = [];
  // A fresh nginx for each measure: what one left allocated would hide what the next allocates.
  const withNchan = async (measure: (nchan: Nchan | undefined) => Promise<FloorRow | FloorRow[]>) => {
    const started = await startNchan();
    const nchan = 'missing' in started ? undefined : started;
    try {
      for (const row of [await measure(nchan)].flat()) {
        if ('missing' in started) row.note = `Nchan not measured: ${started.missing}`;
        rows.push(row);
        log(row);
      }
    } finally {
      await nchan?.stop();
    }
  };
  const runs = (name: string) => !settings.only || settings.only.includes(name);
  if (runs('push')) await withNchan((nchan) => cpuPerPush(settings, nchan));
  if (runs('wake')) await withNchan((nchan) => wakeUp(settings, nchan));
  if (runs('fanout-msg')) await withNchan((nchan) => fanOut(settings, 'msg', nchan));
  if (runs('fanout-so')) await withNchan((nchan) => fanOut(settings, 'so', nchan));
  if (runs('memory'))
    await withNchan((nchan) => {
      const available = nchan !== undefined;
      // idleMemory starts an nginx of its own per turn.
      return nchan?.stop().then(() => idleMemory(settings, available)) ?? idleMemory(settings, false);
    });
  return rows;
}
