/**
 * `npm run bench`: starts real hubs (and baselines) as processes on temp directories, drives them over
 * loopback HTTP with keep-alive connections, and writes docs/benchmarks.md and docs/benchmarks.json
 * (bench/resultsPage.ts). On a shared 2-core machine only ratios against baselines measured in the same
 * run mean much. By default it measures issue 33's table (bench/floor.ts: the hub against bare Koa,
 * bare Node and Nchan) and issue 32's (bench/signalr.ts: SignalR over WebSockets against the REST
 * long-poll) and profiles a push, in a few minutes; flags:
 *   --turns N      more turns (3 by default; wake-up samples 100 per turn)
 *   --before DIR   an older build (a dist directory inside the repository) measured beside this one
 *   --measures a,b some of the floor table's measures only: push, wake, fanout-msg, fanout-so, memory
 *   --all          also the other scenarios: push, wakeup, fanout, listeners, messages, storm (one SQLite
 *                  process), pg-push, pg-wakeup, pg-fanout, pg-idle (PostgreSQL, bench/postgres.ts)
 *   --only a,b     those scenarios only (`floor`, `signalr`, the names above, the groups `sqlite` and
 *                  `postgres`), printed, the docs left alone (or BENCH_ONLY=a,b)
 *   --page         with --only: the page rewritten all the same, this run's tables (floor, signalr) new and
 *                  the others kept from docs/benchmarks.json
 *   --quick        everything shorter (or BENCH_QUICK=1)
 */
import autocannon from 'autocannon';
import Sqlite from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FloorRow } from './floor.js';
import { FANOUT_ROUNDS_PER_TURN, floorTable, loadAverage } from './floor.js';
import type { Row } from './postgres.js';
import { postgresFanOut, postgresIdlePolls, postgresPush, postgresWakeUp } from './postgres.js';
import { topSelfTime } from './profile.js';
import type { Results } from './resultsPage.js';
import { previousResults, previousScenarios, writeResults } from './resultsPage.js';
import type { SignalrRow } from './signalr.js';
import { signalrTable } from './signalr.js';
import type { Server } from './support.js';
import {
  device,
  httpGet,
  identity,
  median,
  messageThroughput,
  percentile,
  pollEachObject,
  pushPath,
  ROOT,
  rssOf,
  sampleWakeUps,
  sleep,
  startBareKoa,
  startHubProcess,
  subscribeEach,
  waitingPolls,
} from './support.js';

const QUICK = process.env.BENCH_QUICK === '1' || process.argv.includes('--quick');
const REPEATS = QUICK ? 1 : 3;
const SECONDS = QUICK ? 2 : 4;

const rows: Row[] = [];
const record = (row: Row) => {
  rows.push(row);
  console.log(
    `${row.scenario.padEnd(34)} ${row.measure.padEnd(34)} ${String(row.value).padStart(10)} ${row.unit} ${row.note ?? ''}`,
  );
};

/** Requests per second of one autocannon run against `url`; fails on any non-2xx or error. */
async function rateOnce(
  url: string,
  connections: number,
  pathFor: (n: number) => string,
  seconds = SECONDS,
): Promise<number> {
  let n = 0;
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: pathFor(n++) }) }],
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${result.non2xx} non-2xx and ${result.errors} errors at ${url}`);
  return result.requests.average;
}

/**
 * Baseline and hub measured in turns (baseline, hub, baseline, hub …), both processes up throughout,
 * so a slow moment of the shared machine hits both sides of a ratio alike. Reports the medians of the
 * rates and of the per-turn ratios.
 */
async function pairedRates(baseline: Server, hub: Server, connections: number, hubPath: (n: number) => string) {
  const baselines: number[] = [];
  const hubs: number[] = [];
  const ratios: number[] = [];
  for (let r = 0; r < REPEATS; r++) {
    const b = await rateOnce(baseline.url, connections, () => '/rest/platform/PushStateObject');
    const h = await rateOnce(hub.url, connections, hubPath);
    baselines.push(b);
    hubs.push(h);
    ratios.push((100 * h) / b);
  }
  return { baseline: Math.round(median(baselines)), hub: Math.round(median(hubs)), ratio: Math.round(median(ratios)) };
}

/** Raw better-sqlite3: one single-row upsert per transaction, the hub's pragmas. */
function rawCommitsPerSecond(sync: 'NORMAL' | 'FULL'): number {
  const results: number[] = [];
  for (let r = 0; r < REPEATS; r++) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hub-bench-raw-'));
    const db = new Sqlite(path.join(dir, 'raw.db'));
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${sync}`);
    db.exec('create table t (k text primary key, v text not null, at integer not null)');
    const upsert = db.prepare(
      'insert into t (k, v, at) values (?, ?, ?) on conflict (k) do update set v = excluded.v, at = excluded.at',
    );
    const tx = db.transaction((k: string, v: string) => upsert.run(k, v, Date.now()));
    const until = Date.now() + SECONDS * 1000;
    let n = 0;
    while (Date.now() < until) tx(`K${n % 100}`, String(n++));
    results.push(n / SECONDS);
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return Math.round(median(results));
}

async function pushThroughput(): Promise<void> {
  const scenario = '1. push throughput';
  const koa = await startBareKoa();
  for (const sync of ['normal', 'full'] as const) {
    const raw = rawCommitsPerSecond(sync === 'normal' ? 'NORMAL' : 'FULL');
    record({ scenario, measure: `raw better-sqlite3 commits, ${sync}`, value: raw, unit: 'commits/s' });
    const hub = await startHubProcess({ HUB_SYNC: sync });
    await rateOnce(hub.url, 64, pushPath, 1); // warm-up: JIT, statement cache, WAL file
    for (const c of [1, 8, 64]) {
      const { baseline, hub: value, ratio } = await pairedRates(koa, hub, c, pushPath);
      if (sync === 'normal')
        record({ scenario, measure: `bare Koa 204, ${c} clients`, value: baseline, unit: 'req/s' });
      record({
        scenario,
        measure: `hub push, ${sync}, ${c} clients`,
        value,
        unit: 'req/s',
        note: `${ratio}% of bare Koa (median of per-turn ratios)`,
      });
      if (sync === 'normal' && c === 64)
        record({
          scenario,
          measure: 'target: ≥ 55% of bare Koa at 64',
          value: ratio,
          unit: '%',
          note: ratio >= 55 ? 'met' : 'NOT met',
        });
    }
    await hub.stop();
  }
  await koa.stop();
}

/** Runs `work` over `items` with at most `limit` at once. */
async function inParallel<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}

/** The soft open-file limit of this process (and of the hubs it starts, which inherit it). */
function openFileLimit(): number {
  const line = fs
    .readFileSync('/proc/self/limits', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Max open files'));
  const soft = line?.split(/\s{2,}/)[1];
  return soft === undefined || soft === 'unlimited' ? Infinity : Number(soft);
}

async function wakeUpLatency(n: number, target: { p50?: number; p99: number }): Promise<void> {
  const scenario = `2. wake-up latency, ${n} pollers`;
  const needed = n + 500;
  if (openFileLimit() < needed) {
    record({
      scenario,
      measure: 'skipped',
      value: openFileLimit(),
      unit: 'open files allowed',
      note: `needs ${needed}: raise the hard limit (ulimit -Hn) and run again`,
    });
    return;
  }
  const hub = await startHubProcess();
  const ids = await subscribeEach(hub, n, 'SubscribeToStateObjects', (i) => `${identity.consumer('Bench')}&name=N${i}`);
  const rssBefore = rssOf(hub.pid);
  const { arrived, close } = pollEachObject(hub, ids);
  await waitingPolls(hub, n);
  await sleep(500);
  const rssAfter = rssOf(hub.pid);
  const { fromAck, fromSend } = await sampleWakeUps(hub, arrived, n, QUICK ? 30 : 200);
  const round2 = (v: number) => Math.round(v * 100) / 100;
  const p50 = round2(percentile(fromSend, 50));
  const p99 = round2(percentile(fromSend, 99));
  record({ scenario, measure: 'p50 from the push’s 204', value: round2(percentile(fromAck, 50)), unit: 'ms' });
  record({ scenario, measure: 'p99 from the push’s 204', value: round2(percentile(fromAck, 99)), unit: 'ms' });
  if (target.p50 !== undefined) {
    record({
      scenario,
      measure: 'p50 from sending the push',
      value: p50,
      unit: 'ms',
      note: `target ≤ ${target.p50} ms: ${p50 <= target.p50 ? 'met' : 'NOT met'}`,
    });
  } else {
    record({ scenario, measure: 'p50 from sending the push', value: p50, unit: 'ms' });
  }
  record({
    scenario,
    measure: 'p99 from sending the push',
    value: p99,
    unit: 'ms',
    note: `target ≤ ${target.p99} ms: ${p99 <= target.p99 ? 'met' : 'NOT met'}`,
  });
  if (n >= 10_000) {
    const perPoller = Math.round((rssAfter - rssBefore) / n / 102.4) / 10;
    record({
      scenario: '4. memory per idle long-poller',
      measure: `RSS delta / ${n}`,
      value: perPoller,
      unit: 'KB',
      note: `target ≤ 11 KB: ${perPoller <= 11 ? 'met' : 'NOT met'}`,
    });
  }
  await close();
}

/**
 * A reply with the moment it arrived. The time is taken by a handler attached when the request is
 * made: attached only after the write's own answer came back, it would read the clock then, so any
 * reply that arrived earlier (the hub answers woken subscribers before the publisher) would count as
 * arriving as late as the publisher's 204.
 */
const timed = <T>(reply: Promise<T>): Promise<{ r: T; t: number }> => reply.then((r) => ({ r, t: performance.now() }));

async function fanOut(n: number): Promise<void> {
  const scenario = `3. fan-out to ${n} subscribers`;
  const hub = await startHubProcess();
  const ids = await subscribeEach(hub, n, 'SubscribeToMessage', (i) => `${identity.consumer(`F${i}`)}`);
  const devices = ids.map(() => device(hub.url));
  const times: number[] = [];
  for (let round = 0; round < (QUICK ? 3 : 7); round++) {
    const polls = ids.map((id, i) =>
      timed(
        httpGet(
          `${hub.url}/rest/consumer/GetMessages?${identity.consumer(`F${i}`)}&subscriptionId=${id}&timeout=60000`,
          devices[i],
        ),
      ),
    );
    await waitingPolls(hub, n);
    const sent = performance.now();
    await httpGet(
      `${hub.url}/rest/consumer/SendMessage?${identity.consumer('Sender')}&scope=All&key=Ping&data=${round}`,
    );
    const replies = await Promise.all(polls);
    if (replies.some(({ r }) => r.body === '[]')) throw new Error('a subscriber missed the message');
    times.push(Math.max(...replies.map(({ t }) => t)) - sent);
  }
  const value = Math.round(median(times) * 10) / 10;
  record({
    scenario,
    measure: 'send → last subscriber answered (median)',
    value,
    unit: 'ms',
    note: `target ≤ 40 ms: ${value <= 40 ? 'met' : 'NOT met'}`,
  });
  await hub.stop();
  await Promise.allSettled(devices.map((d) => d.destroy()));
}

/** The same on StateObjects: n subscribers of one object wait; one push; until the last one has it. */
async function stateObjectFanOut(n: number): Promise<void> {
  const scenario = `3b. StateObject fan-out to ${n} subscribers`;
  const hub = await startHubProcess();
  const ids = await subscribeEach(hub, n, 'SubscribeToStateObjects', (i) => `${identity.consumer(`G${i}`)}&name=Fan`);
  const devices = ids.map(() => device(hub.url));
  const times: number[] = [];
  for (let round = 0; round < (QUICK ? 3 : 7); round++) {
    const polls = ids.map((id, i) =>
      timed(
        httpGet(
          `${hub.url}/rest/consumer/GetStateObjects?${identity.consumer(`G${i}`)}&subscriptionId=${id}&timeout=60000`,
          devices[i],
        ),
      ),
    );
    // The first round drains nothing (no object yet); every later one waits for the push.
    await waitingPolls(hub, n);
    const sent = performance.now();
    await httpGet(`${hub.url}/rest/platform/PushStateObject?${identity.package}&name=Fan&value=${round}`);
    const replies = await Promise.all(polls);
    if (replies.some(({ r }) => r.body === '[]')) throw new Error('a subscriber missed the push');
    times.push(Math.max(...replies.map(({ t }) => t)) - sent);
  }
  const value = Math.round(median(times) * 10) / 10;
  record({
    scenario,
    measure: 'push → last subscriber answered (median)',
    value,
    unit: 'ms',
    note: `target ≤ 40 ms: ${value <= 40 ? 'met' : 'NOT met'}`,
  });
  await hub.stop();
  await Promise.allSettled(devices.map((d) => d.destroy()));
}

/** Rates of two hubs measured in turns (as pairedRates), with the ratio second/first per turn. */
async function pairedHubs(first: Server, second: Server, connections: number, pathFor: (n: number) => string) {
  const a: number[] = [];
  const b: number[] = [];
  const ratios: number[] = [];
  for (let r = 0; r < REPEATS; r++) {
    const x = await rateOnce(first.url, connections, pathFor);
    const y = await rateOnce(second.url, connections, pathFor);
    a.push(x);
    b.push(y);
    ratios.push(y / x);
  }
  return {
    first: Math.round(median(a)),
    second: Math.round(median(b)),
    ratio: Math.round(median(ratios) * 1000) / 1000,
  };
}

/** Listeners nobody polls must cost nothing at write time: push with n `name=*` subscriptions vs none. */
async function pushWithIdleSubscriptions(n: number): Promise<void> {
  const scenario = `7. push, ${n} idle name=* subscriptions`;
  const plain = await startHubProcess();
  const watched = await startHubProcess();
  await inParallel([...Array(n).keys()], 64, async (i) => {
    const { status } = await httpGet(
      `${watched.url}/rest/consumer/SubscribeToStateObjects?${identity.consumer(`W${i}`)}&name=*`,
    );
    if (status !== 200) throw new Error(`subscribe answered ${status}`);
  });
  await rateOnce(plain.url, 64, pushPath, 1);
  await rateOnce(watched.url, 64, pushPath, 1);
  const { first, second, ratio } = await pairedHubs(plain, watched, 64, pushPath);
  record({ scenario, measure: 'push, no subscriptions, 64 clients', value: first, unit: 'req/s' });
  record({
    scenario,
    measure: `push, ${n} name=* subscriptions, 64 clients`,
    value: second,
    unit: 'req/s',
    note: `${ratio}× (target ≥ 0.8×: ${ratio >= 0.8 ? 'met' : 'NOT met'})`,
  });
  await plain.stop();
  await watched.stop();
}

/** SendMessage to All with n message subscriptions (nobody polling) vs with one. */
async function sendWithIdleSubscriptions(n: number): Promise<void> {
  const scenario = `8. send to All, ${n} idle subscriptions`;
  const one = await startHubProcess();
  const many = await startHubProcess();
  await httpGet(`${one.url}/rest/consumer/SubscribeToMessage?${identity.consumer('M0')}`);
  await inParallel([...Array(n).keys()], 64, async (i) => {
    const { status } = await httpGet(`${many.url}/rest/consumer/SubscribeToMessage?${identity.consumer(`M${i}`)}`);
    if (status !== 200) throw new Error(`subscribe answered ${status}`);
  });
  const sendPath = (k: number) => `/rest/platform/SendMessage?${identity.package}&scope=All&key=K&data=${k}`;
  await rateOnce(one.url, 64, sendPath, 1);
  await rateOnce(many.url, 64, sendPath, 1);
  const { first, second, ratio } = await pairedHubs(one, many, 64, sendPath);
  record({ scenario, measure: 'send to All, 1 subscription, 64 clients', value: first, unit: 'req/s' });
  record({
    scenario,
    measure: `send to All, ${n} subscriptions, 64 clients`,
    value: second,
    unit: 'req/s',
    note: `${ratio}× (target ≥ 0.8×: ${ratio >= 0.8 ? 'met' : 'NOT met'})`,
  });
  await one.stop();
  await many.stop();
}

async function messageThroughputScenario(): Promise<void> {
  const scenario = '5. message throughput';
  const hub = await startHubProcess();
  const { perSecond, acked, received } = await messageThroughput(hub, SECONDS);
  record({
    scenario,
    measure: '8 senders → 1 polling subscriber',
    value: perSecond,
    unit: 'msg/s',
    note: `${acked} acknowledged, ${received} received, ${received === acked ? 'none lost' : 'MISMATCH'}`,
  });
  await hub.stop();
}

/**
 * Every device at once, as after a hub restart or a power cut: n new callers subscribe concurrently.
 * Each is a caller record and a subscription transaction queued on the one SQLite connection.
 */
async function subscribeStorm(n: number): Promise<void> {
  const scenario = `6. ${n} devices subscribe at once`;
  const hub = await startHubProcess();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const { status } = await httpGet(`${hub.url}/rest/consumer/SubscribeToMessage?${identity.consumer(`Storm${i}`)}`);
      if (status !== 200) throw new Error(`subscribe answered ${status}`);
    }),
  );
  record({
    scenario,
    measure: 'until every device has its subscription',
    value: Math.round(performance.now() - started),
    unit: 'ms',
  });
  await hub.stop();
}

const GROUPS: Record<string, string[]> = {
  sqlite: ['push', 'wakeup', 'fanout', 'listeners', 'messages', 'storm'],
  postgres: ['pg-push', 'pg-wakeup', 'pg-fanout', 'pg-idle'],
};

/** `--name value` on the command line, else the environment variable, else undefined. */
function option(name: string, variable: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : process.env[variable];
}

/** The scenarios of `--only a,b` (or BENCH_ONLY=a,b), groups expanded; undefined runs the default set. */
function onlyScenarios(): string[] | undefined {
  const list = option('only', 'BENCH_ONLY');
  if (list === undefined) return undefined;
  const names = list.split(',').flatMap((name) => GROUPS[name] ?? [name]);
  const known = ['floor', 'signalr', ...Object.values(GROUPS).flat()];
  const unknown = names.filter((name) => !known.includes(name));
  if (unknown.length > 0)
    throw new Error(`unknown scenario ${unknown.join(', ')}: choose from ${known.join(', ')}, sqlite, postgres`);
  return names;
}

/** The commit a build directory was built from, when it says (`.bench-before` keeps a COMMIT file). */
function describeBuild(dist: string): string {
  const commit = path.join(ROOT, dist, '..', 'COMMIT');
  return fs.existsSync(commit) ? `${dist} (${fs.readFileSync(commit, 'utf8').trim()})` : dist;
}

/** The push scenario profiled in a run of its own: the profiler's overhead stays out of every rate. */
async function profilePush(): Promise<{ fn: string; percent: number }[]> {
  const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hub-prof-'));
  const profiled = await startHubProcess({ HUB_SYNC: 'normal' }, ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]);
  await rateOnce(profiled.url, 64, pushPath);
  await profiled.stop();
  const profile = fs.readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
  const summary = profile ? topSelfTime(path.join(profileDir, profile)) : [];
  fs.rmSync(profileDir, { recursive: true, force: true });
  return summary;
}

async function main(): Promise<void> {
  const started = new Date();
  const load = loadAverage();
  const machine = `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  console.log(`hub benchmarks — ${started.toISOString()} — ${machine}${QUICK ? ' (quick)' : ''}\n`);
  const only = onlyScenarios();
  const all = process.argv.includes('--all');
  const runs = (name: string) => (only ? only.includes(name) : name === 'floor' || name === 'signalr' || all);
  const turns = Number(option('turns', 'BENCH_TURNS') ?? (QUICK ? 1 : 3));
  const fanoutRounds = QUICK ? 4 : FANOUT_ROUNDS_PER_TURN;
  const before = option('before', 'BENCH_BEFORE');
  let floor: FloorRow[] = [];
  if (runs('floor')) {
    floor = await floorTable(
      {
        turns,
        wakeSamples: QUICK ? 50 : 100 * turns,
        fanoutRounds: fanoutRounds * turns,
        idleDevices: QUICK ? 2000 : 10_000,
        before,
        only: option('measures', 'BENCH_MEASURES')?.split(','),
      },
      (row) => console.log(JSON.stringify(row)),
    );
  }
  let signalr: SignalrRow[] = [];
  const signalrLoad = loadAverage();
  if (runs('signalr')) {
    signalr = await signalrTable(
      { turns, wakeSamples: QUICK ? 30 : 100, fanRounds: QUICK ? 2 : 3, seconds: QUICK ? 1 : 2, clients: 1000 },
      (row) => console.log(JSON.stringify(row)),
    );
  }
  if (runs('push')) await pushThroughput();
  if (runs('wakeup')) await wakeUpLatency(1000, { p50: 0.5, p99: 5 });
  if (runs('wakeup')) await wakeUpLatency(QUICK ? 2000 : 10_000, { p99: 10 });
  if (runs('fanout')) await fanOut(1000);
  if (runs('fanout')) await stateObjectFanOut(1000);
  if (runs('listeners')) await pushWithIdleSubscriptions(1000);
  if (runs('listeners')) await sendWithIdleSubscriptions(1000);
  if (runs('messages')) await messageThroughputScenario();
  if (runs('storm')) await subscribeStorm(QUICK ? 500 : 2000);
  if (runs('pg-push')) await postgresPush(record);
  if (runs('pg-wakeup')) await postgresWakeUp(record);
  if (runs('pg-fanout')) await postgresFanOut(record);
  if (runs('pg-idle')) await postgresIdlePolls(record);
  const command = `npm run bench${process.argv.slice(2).length ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
  const signalrSection: Results['signalr'] = runs('signalr')
    ? { date: started.toISOString(), command, turns, load: [signalrLoad, loadAverage()], rows: signalr }
    : previousResults()?.signalr;
  if (only && process.argv.includes('--page')) {
    const previous = previousResults();
    if (!previous) throw new Error('--page needs a docs/benchmarks.json to keep the other tables from');
    writeResults({ ...previous, ...(runs('floor') ? { floor, turns, fanoutRounds } : {}), signalr: signalrSection });
    console.log('\nwrote docs/benchmarks.json and docs/benchmarks.md (the tables not measured kept)');
    process.exit(0);
  }
  if (only) {
    console.log('\n--only run: docs/benchmarks.* left as they were');
    process.exit(0);
  }
  const profile = await profilePush();
  writeResults({
    date: started.toISOString(),
    minutes: Math.round((Date.now() - started.getTime()) / 6000) / 10,
    machine,
    load: [load, loadAverage()],
    command,
    turns,
    fanoutRounds,
    before: before ? describeBuild(before) : undefined,
    floor,
    profile,
    scenarios: all ? { date: started.toISOString(), command, rows } : previousScenarios(),
    signalr: signalrSection,
  });
  console.log('\nwrote docs/benchmarks.json and docs/benchmarks.md');
  process.exit(0);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
