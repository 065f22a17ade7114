/**
 * Fan-out and wake-up only, two builds side by side: wake-up latency at 1,000 pollers from the
 * publisher's send (scenario 2), StateObject and message fan-out to 1,000 waiting subscribers (scenarios
 * 3b and 3), with the group-commit transactions per fan-out round (from hub_batch_pieces). Usage (after
 * `npm run build`, with an older build copied elsewhere inside the repository so it finds node_modules):
 *   sh bench/withFileLimit.sh node --import tsx bench/fanoutAB.ts dist .old-dist [turns] [modes]
 * Modes (comma-separated): `wake`, `so`, `msg`, and `msgrate` and `storm` (scenarios 5 and 6, which
 * the group commit's scheduling could touch) run each build in alternating turns (one hub at a time,
 * as bench/run.ts); `wakepaired`, `sopaired`, `msgpaired` keep both builds' hubs up at once and
 * alternate single samples or rounds between them (200 samples or 7 rounds per turn), which holds up
 * best on a machine others are loading; `analyzed` runs each build's fan-outs (StateObjects, then
 * messages) on a hub started again on its file, then on one started on it once statistics were gathered
 * as someone with the sqlite3 CLI might (ANALYZE): the hub's CPU per round, the second ÷ the first (7
 * rounds a turn). HUB_NODE_ARGS (e.g. `--cpu-prof`) is passed to the hubs' node;
 * CLIENT_CPU=1 prints, per fan-out round, the hub's and this process's CPU and preempted milliseconds.
 */
import Sqlite from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import {
  device,
  httpGet,
  identity,
  median,
  messageThroughput,
  percentile,
  pollEachObject,
  sleep,
  startHubProcess,
  subscribeEach,
  waitingPolls,
} from './support.js';
import type { Server } from './support.js';
import { WARM_ROUNDS } from './floor.js';

const N = 1000;

/** A hub of build `dist` (on a stopped hub's `dataDir`, or a fresh one); HUB_NODE_ARGS (e.g. `--cpu-prof`) goes to its node. */
const startBuild = (dist: string, dataDir?: string): Promise<Server> =>
  startHubProcess({}, process.env.HUB_NODE_ARGS?.split(' ').filter(Boolean) ?? [], dist, dataDir);

async function metric(hub: Server, name: string): Promise<number> {
  const { body } = await httpGet(`${hub.url}/metrics?${identity.admin}`);
  return Number(new RegExp(`^${name} (\\d+)`, 'm').exec(body)?.[1] ?? 0);
}

interface Pollers {
  hub: Server;
  /** One wake-up: push to a random poller's object, ms from sending the push to that poller's answer. */
  sample(k: number): Promise<number>;
  stop(): Promise<void>;
}

/** 1,000 pollers, each waiting on its own object (scenario 2). */
async function pollers(dist: string): Promise<Pollers> {
  const hub = await startBuild(dist);
  const ids = await subscribeEach(hub, N, 'SubscribeToStateObjects', (i) => `${identity.consumer('Bench')}&name=N${i}`);
  const { arrived, close } = pollEachObject(hub, ids);
  await waitingPolls(hub, N);
  await sleep(500);
  return {
    hub,
    async sample(k) {
      const i = Math.floor(Math.random() * N);
      const answered = new Promise<number>((resolve) => arrived.set(i, resolve));
      const sent = performance.now();
      await httpGet(`${hub.url}/rest/platform/PushStateObject?${identity.package}&name=N${i}&value=${k}`);
      const t = (await answered) - sent;
      arrived.delete(i);
      return t;
    },
    stop: close,
  };
}

/**
 * The hub's main thread: milliseconds on a CPU and waiting for one (preempted by other processes), from
 * /proc/<pid>/schedstat (nanoseconds): what the other helpers' load did to a round, separated from what
 * the hub itself spent.
 */
function schedstat(pid: number): { cpu: number; queued: number } {
  const [cpu, queued] = fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ').map(Number);
  return { cpu: cpu / 1e6, queued: queued / 1e6 };
}

const r2 = (v: number) => Math.round(v * 100) / 100;

async function wake(dist: string): Promise<{ p50: number; p99: number }> {
  const p = await pollers(dist);
  const times: number[] = [];
  for (let k = 0; k < 200; k++) {
    times.push(await p.sample(k));
    await sleep(5);
  }
  await p.stop();
  return { p50: r2(percentile(times, 50)), p99: r2(percentile(times, 99)) };
}

/**
 * Both builds' hubs up at once, each with its 1,000 pollers, and their wake-ups sampled in alternation
 * (A, B, B, A, …): the other helpers' load on this shared machine then weighs on both alike.
 */
async function wakePaired(dists: string[], samples: number): Promise<Record<string, { p50: number; p99: number }>> {
  const ps: Pollers[] = [];
  for (const dist of dists) ps.push(await pollers(dist));
  const times: number[][] = dists.map(() => []);
  for (let k = 0; k < samples; k++) {
    const order = k % 2 ? [1, 0] : [0, 1];
    for (const j of order) {
      times[j].push(await ps[j].sample(k));
      await sleep(5);
    }
  }
  for (const p of ps) await p.stop();
  return Object.fromEntries(
    dists.map((d, j) => [d, { p50: r2(percentile(times[j], 50)), p99: r2(percentile(times[j], 99)) }]),
  );
}

/**
 * A reply with the moment it arrived. The time is taken by a handler attached when the request is
 * made: attached only after the write's own answer came back, it would read the clock then, so any
 * reply that arrived earlier (the hub answers woken subscribers before the publisher) would count as
 * arriving as late as the publisher's 204.
 */
const timed = <T>(reply: Promise<T>): Promise<{ r: T; t: number }> => reply.then((r) => ({ r, t: performance.now() }));

interface FanOut {
  hub: Server;
  ids: string[];
  /** One round: every subscriber polls, one write, ms from sending it to the last answer; and the transactions it took. */
  round(k: number): Promise<{ ms: number; tx: number; cpu: number; queued: number }>;
  stop(keepData?: boolean): Promise<void>;
}

/**
 * 1,000 subscribers waiting on one StateObject name or for a message to All (scenarios 3b and 3); or,
 * with `resumed`, the subscriptions of a stopped hub of the same kind, on its data directory.
 */
async function fanOutHub(
  dist: string,
  kind: 'so' | 'msg',
  resumed?: { dataDir: string; ids: string[] },
): Promise<FanOut> {
  const hub = await startBuild(dist, resumed?.dataDir);
  const ids = resumed
    ? resumed.ids
    : kind === 'so'
      ? await subscribeEach(hub, N, 'SubscribeToStateObjects', (i) => `${identity.consumer(`G${i}`)}&name=Fan`)
      : await subscribeEach(hub, N, 'SubscribeToMessage', (i) => identity.consumer(`F${i}`));
  const devices = ids.map(() => device(hub.url));
  return {
    hub,
    ids,
    async round(k) {
      const polls = ids.map((id, i) =>
        timed(
          kind === 'so'
            ? httpGet(
                `${hub.url}/rest/consumer/GetStateObjects?${identity.consumer(`G${i}`)}&subscriptionId=${id}&timeout=60000`,
                devices[i],
              )
            : httpGet(
                `${hub.url}/rest/consumer/GetMessages?${identity.consumer(`F${i}`)}&subscriptionId=${id}&timeout=60000`,
                devices[i],
              ),
        ),
      );
      await waitingPolls(hub, N);
      const before = await metric(hub, 'hub_batch_pieces_count');
      const sched = schedstat(hub.pid);
      const client = schedstat(process.pid);
      const sent = performance.now();
      await (kind === 'so'
        ? httpGet(`${hub.url}/rest/platform/PushStateObject?${identity.package}&name=Fan&value=${k}`)
        : httpGet(`${hub.url}/rest/consumer/SendMessage?${identity.consumer('Sender')}&scope=All&key=Ping&data=${k}`));
      const replies = await Promise.all(polls);
      if (replies.some(({ r }) => r.body === '[]')) throw new Error('a subscriber missed the write');
      const ms = Math.max(...replies.map(({ t }) => t)) - sent;
      const after = schedstat(hub.pid);
      const clientAfter = schedstat(process.pid);
      if (process.env.CLIENT_CPU)
        console.error(
          JSON.stringify({
            k,
            ms: Math.round(ms),
            hubCpu: Math.round(after.cpu - sched.cpu),
            hubQueued: Math.round(after.queued - sched.queued),
            clientCpu: Math.round(clientAfter.cpu - client.cpu),
            clientQueued: Math.round(clientAfter.queued - client.queued),
          }),
        );
      // Minus the write's own transaction (the metrics read has none).
      return {
        ms,
        tx: (await metric(hub, 'hub_batch_pieces_count')) - before - 1,
        cpu: after.cpu - sched.cpu,
        queued: after.queued - sched.queued,
      };
    },
    async stop(keepData = false) {
      await hub.stop(keepData);
      await Promise.allSettled(devices.map((d) => d.destroy()));
    },
  };
}

async function fanOut(dist: string, kind: 'so' | 'msg') {
  const f = await fanOutHub(dist, kind);
  const rounds = [];
  for (let k = 0; k < 7; k++) rounds.push(await f.round(k));
  await f.stop();
  return {
    ms: r1(median(rounds.map((r) => r.ms))),
    all: rounds.map((r) => Math.round(r.ms)),
    txPerRound: median(rounds.map((r) => r.tx)),
    cpu: rounds.map((r) => Math.round(r.cpu)),
    queued: rounds.map((r) => Math.round(r.queued)),
  };
}

const r1 = (v: number) => Math.round(v * 10) / 10;

/** Both builds' hubs up at once, rounds in alternation (A, B, B, A, …); medians of all rounds and of the warm ones (from the third). */
async function fanOutPaired(dists: string[], kind: 'so' | 'msg', rounds: number) {
  const fs_: FanOut[] = [];
  for (const dist of dists) fs_.push(await fanOutHub(dist, kind));
  const results: Awaited<ReturnType<FanOut['round']>>[][] = dists.map(() => []);
  for (let k = 0; k < rounds; k++) {
    for (const j of k % 2 ? [1, 0] : [0, 1]) results[j].push(await fs_[j].round(k));
  }
  for (const f of fs_) await f.stop();
  return Object.fromEntries(
    dists.map((d, j) => [
      d,
      {
        median: r1(median(results[j].map((r) => r.ms))),
        warmMedian: r1(median(results[j].slice(WARM_ROUNDS).map((r) => r.ms))),
        all: results[j].map((r) => Math.round(r.ms)),
        txPerRound: median(results[j].map((r) => r.tx)),
        cpuMedian: r1(median(results[j].slice(WARM_ROUNDS).map((r) => r.cpu))),
        queuedMedian: r1(median(results[j].slice(WARM_ROUNDS).map((r) => r.queued))),
      },
    ]),
  );
}

/**
 * Each fan-out's hub CPU per round (medians of the warm rounds) on a hub started again on the same file,
 * then on one started on it after ANALYZE (statistics, loaded by a new connection, make SQLite re-prepare
 * at every bind a statement where a bound value meets an indexed column); `ratio` is the second ÷ the first.
 */
async function analyzed(dist: string, rounds: number) {
  const out: Record<string, { restarted: number; analyzed: number; ratio: number }> = {};
  const cpu = async (hub: FanOut) => {
    const r = [];
    for (let k = 0; k < rounds + WARM_ROUNDS; k++) r.push((await hub.round(k)).cpu);
    return median(r.slice(WARM_ROUNDS));
  };
  for (const kind of ['so', 'msg'] as const) {
    const first = await fanOutHub(dist, kind);
    const resumed = { dataDir: first.hub.dataDir as string, ids: first.ids };
    await first.stop(true);
    const restarted = await fanOutHub(dist, kind, resumed);
    const plain = await cpu(restarted);
    await restarted.stop(true);
    const cli = new Sqlite(path.join(resumed.dataDir, 'hub.db'));
    cli.exec('analyze');
    cli.close();
    const withStatistics = await fanOutHub(dist, kind, resumed);
    const after = await cpu(withStatistics);
    await withStatistics.stop();
    out[kind] = { restarted: r1(plain), analyzed: r1(after), ratio: r2(after / plain) };
  }
  return out;
}

/** Scenario 5: 8 senders → 1 polling subscriber for 4 s; messages received per second (and none lost). */
async function messageRate(dist: string): Promise<{ perSecond: number; lost: number }> {
  const hub = await startBuild(dist);
  const { perSecond, acked, received } = await messageThroughput(hub, 4);
  await hub.stop();
  return { perSecond, lost: acked - received };
}

async function storm(dist: string): Promise<number> {
  const hub = await startBuild(dist);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 2000 }, async (_, i) => {
      const { status } = await httpGet(`${hub.url}/rest/consumer/SubscribeToMessage?${identity.consumer(`Storm${i}`)}`);
      if (status !== 200) throw new Error(`subscribe answered ${status}`);
    }),
  );
  const ms = Math.round(performance.now() - started);
  await hub.stop();
  return ms;
}

const [a = 'dist', b, turnsArg = '3', onlyArg = 'wake,so,msg'] = process.argv.slice(2);
const only = new Set(onlyArg.split(','));
const builds = b ? [a, b] : [a];
if (only.has('wakepaired') && b) {
  // One long paired run instead of turns: 400 samples per build.
  console.log(JSON.stringify({ wakePaired1000: await wakePaired(builds, 200 * Number(turnsArg)) }));
}
for (const kind of ['so', 'msg'] as const) {
  if (only.has(`${kind}paired`) && b)
    console.log(
      JSON.stringify({ [`${kind}FanOutPaired1000`]: await fanOutPaired(builds, kind, 7 * Number(turnsArg)) }),
    );
}
if (only.has('analyzed'))
  for (const dist of builds)
    console.log(JSON.stringify({ analyzed: dist, ...(await analyzed(dist, 7 * Number(turnsArg))) }));
for (let turn = 0; turn < Number(turnsArg); turn++) {
  if (!['wake', 'so', 'msg', 'msgrate', 'storm'].some((x) => only.has(x))) break;
  for (const dist of turn % 2 ? [...builds].reverse() : builds) {
    const out: Record<string, unknown> = { turn, dist };
    if (only.has('wake')) out.wake1000 = await wake(dist);
    if (only.has('so')) out.stateObjectFanOut = await fanOut(dist, 'so');
    if (only.has('msg')) out.messageFanOut = await fanOut(dist, 'msg');
    if (only.has('msgrate')) out.messageRate = await messageRate(dist);
    if (only.has('storm')) out.stormMs = await storm(dist);
    console.log(JSON.stringify(out));
  }
}
