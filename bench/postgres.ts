/**
 * Issue 22's targets: several hub processes on one PostgreSQL, each scenario on a fresh database created
 * for it (on HUB_BENCH_POSTGRES_URL's server, default postgres://postgres@127.0.0.1:5432/postgres) and
 * dropped afterwards. Every hub is a real `node dist/src/cli.js` process with its own data directory.
 *   pg-push    push rate, 64 clients: 1 process on SQLite, then 1, 2 and 3 processes on one database, in
 *              turns; CPU-ms per push of the hub processes and of their PostgreSQL backends
 *   pg-wakeup  a push on process A wakes one of 1,000 polls waiting on process B
 *   pg-fanout  one push wakes 1,000 polls spread over 3 processes
 *   pg-idle    100,000 idle waiting polls on 7 processes (bench/idlePolls.ts workers, one per process,
 *              each from its own 127.0.0.x address), then one send to All
 * Sizes shrink with BENCH_QUICK=1 (and BENCH_IDLE_POLLS for pg-idle).
 */
import { fork } from 'node:child_process';
import fs from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Server } from './support.js';
import type { Database } from './postgresSupport.js';
import {
  backendsOf,
  cpuDuring,
  freshDatabase,
  pushLoad,
  startPostgresHubs,
  stopAll,
  waitingOn,
  waitingPollsOn,
} from './postgresSupport.js';
import {
  cpuMs,
  device,
  httpGet,
  identity,
  median,
  owned,
  percentile,
  pollEachObject,
  ROOT,
  pssOf,
  rssOf,
  sampleWakeUps,
  sleep,
  startHubProcess,
  subscribeEach,
} from './support.js';

export interface Row {
  scenario: string;
  measure: string;
  value: number;
  unit: string;
  note?: string;
}
type Recorder = (row: Row) => void;

const QUICK = process.env.BENCH_QUICK === '1';
const REPEATS = QUICK ? 1 : 3;
const SECONDS = QUICK ? 2 : 4;
const r1 = (v: number) => Math.round(v * 10) / 10;
const r2 = (v: number) => Math.round(v * 100) / 100;
const progress = (what: string) => console.error(`  [${new Date().toISOString().slice(11, 19)}] ${what}`);
const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');

/**
 * Push throughput, 64 clients. One SQLite hub stays up throughout; each turn measures it, then 1, 2 and
 * 3 processes on one PostgreSQL database (started for the turn, stopped after it, so idle processes
 * never count), in that order. Ratios are medians of the per-turn ratios.
 */
export async function postgresPush(record: Recorder): Promise<void> {
  const scenario = 'P1. push, processes on PostgreSQL';
  const db = await freshDatabase();
  const sqlite = await startHubProcess();
  const counts = [1, 2, 3];
  const rates = new Map<number, number[]>(counts.map((k) => [k, []]));
  const cpu = new Map<number, { hub: number[]; pg: number[] }>(counts.map((k) => [k, { hub: [], pg: [] }]));
  const sqliteRates: number[] = [];
  const sqliteCpu: number[] = [];
  const ratios = new Map<number, number[]>(counts.map((k) => [k, []]));
  try {
    await pushLoad([sqlite], 64, 1); // warm-up
    for (let turn = 0; turn < REPEATS; turn++) {
      const base = sqlite.pid;
      const baseBefore = cpuMs(base);
      const s = await pushLoad([sqlite], 64, SECONDS);
      sqliteRates.push(s.perSecond);
      sqliteCpu.push((cpuMs(base) - baseBefore) / s.total);
      const turnRates = new Map<number, number>();
      for (const k of counts) {
        const hubs = await startPostgresHubs(db, k);
        try {
          await pushLoad(hubs, 64, 1); // warm-up: JIT, statements, connections
          const { result, hubMs, pgMs } = await cpuDuring(db.admin, hubs, () => pushLoad(hubs, 64, SECONDS));
          rates.get(k)?.push(result.perSecond);
          turnRates.set(k, result.perSecond);
          cpu.get(k)?.hub.push(hubMs / result.total);
          cpu.get(k)?.pg.push(pgMs / result.total);
        } finally {
          await stopAll(hubs);
        }
      }
      const one = turnRates.get(1) ?? NaN;
      ratios.get(1)?.push(one / s.perSecond);
      for (const k of [2, 3]) ratios.get(k)?.push((turnRates.get(k) ?? NaN) / one);
    }
  } finally {
    await sqlite.stop();
    await db.drop();
  }
  const ms = (v: number[]) => r2(median(v) * 1000) / 1000;
  record({
    scenario,
    measure: 'SQLite, 1 process, 64 clients',
    value: Math.round(median(sqliteRates)),
    unit: 'req/s',
    note: `hub CPU ${r2(median(sqliteCpu) * 1000)} µs/push`,
  });
  for (const k of counts) {
    const c = cpu.get(k) ?? { hub: [], pg: [] };
    const ratio = r2(median(ratios.get(k) ?? []));
    const target =
      k === 1
        ? `${ratio}× SQLite (target ≥ 0.5×: ${verdict(ratio >= 0.5)})`
        : `${ratio}× 1 process (target: no negative scaling, ≥ 1×: ${verdict(ratio >= 1)})`;
    record({
      scenario,
      measure: `PostgreSQL, ${k} process${k > 1 ? 'es' : ''}, 64 clients`,
      value: Math.round(median(rates.get(k) ?? [])),
      unit: 'req/s',
      note: target,
    });
    record({
      scenario,
      measure: `CPU per push, ${k} process${k > 1 ? 'es' : ''}: hubs + PostgreSQL`,
      value: r2((median(c.hub) + median(c.pg)) * 1000),
      unit: 'µs',
      note: `hubs ${ms(c.hub) * 1000} µs + PostgreSQL backends ${ms(c.pg) * 1000} µs`,
    });
  }
}

/** 1,000 polls waiting on process B, each on its own StateObject; pushes through process A. */
export async function postgresWakeUp(record: Recorder, n = 1000): Promise<void> {
  const scenario = `P2. wake-up across processes, ${n} polls`;
  const db = await freshDatabase();
  const [a, b] = await startPostgresHubs(db, 2);
  try {
    const ids = await subscribeEach(b, n, 'SubscribeToStateObjects', (i) => `${identity.consumer('Bench')}&name=N${i}`);
    const { arrived, close } = pollEachObject(b, ids);
    await waitingPollsOn([b], n);
    await sleep(500);
    const { fromAck, fromSend } = await sampleWakeUps(a, arrived, n, QUICK ? 30 : 300);
    await close();
    const p50 = r2(percentile(fromAck, 50));
    const p99 = r2(percentile(fromAck, 99));
    record({
      scenario,
      measure: 'p50 from the push’s 204 on A',
      value: p50,
      unit: 'ms',
      note: `target ≤ 3 ms: ${verdict(p50 <= 3)}`,
    });
    record({
      scenario,
      measure: 'p99 from the push’s 204 on A',
      value: p99,
      unit: 'ms',
      note: `target ≤ 10 ms: ${verdict(p99 <= 10)}`,
    });
    record({ scenario, measure: 'p50 from sending the push', value: r2(percentile(fromSend, 50)), unit: 'ms' });
    record({ scenario, measure: 'p99 from sending the push', value: r2(percentile(fromSend, 99)), unit: 'ms' });
  } finally {
    await stopAll([a, b]);
    await db.drop();
  }
}

/** Until the hubs together hold at least `atLeast` waiting polls (their metrics), `seconds` at most. */
const timed = <T>(reply: Promise<T>): Promise<{ r: T; t: number }> => reply.then((r) => ({ r, t: performance.now() }));

/** n StateObject subscribers of one name, subscriber i subscribed and polling on process i % 3; one push per round, through process round % 3. */
export async function postgresFanOut(record: Recorder, n = 1000): Promise<void> {
  const scenario = `P3. fan-out to ${n} polls on 3 processes`;
  const db = await freshDatabase();
  const hubs = await startPostgresHubs(db, 3);
  const on = (i: number) => hubs[i % hubs.length];
  const devices = Array.from({ length: n }, (_, i) => device(on(i).url));
  try {
    const ids = await subscribeEach(on, n, 'SubscribeToStateObjects', (i) => `${identity.consumer(`G${i}`)}&name=Fan`);
    const lasts: number[] = [];
    const each: number[] = [];
    const rounds = QUICK ? 4 : 25;
    for (let round = 0; round < rounds; round++) {
      const polls = ids.map((id, i) =>
        timed(
          httpGet(
            `${on(i).url}/rest/consumer/GetStateObjects?${identity.consumer(`G${i}`)}&subscriptionId=${id}&timeout=120000`,
            devices[i],
          ),
        ),
      );
      await waitingPollsOn(hubs, n, 110);
      await sleep(200); // let the last polls' answers and the metrics reads settle
      const sent = performance.now();
      await httpGet(`${on(round).url}/rest/platform/PushStateObject?${identity.package}&name=Fan&value=${round}`);
      const replies = await Promise.all(polls);
      if (replies.some(({ r }) => r.body === '[]')) throw new Error('a subscriber missed the push');
      // The first round answers nothing new for polls that ran before the object existed: it warms up.
      if (round === 0) continue;
      const times = replies.map(({ t }) => t - sent);
      lasts.push(Math.max(...times));
      each.push(...times);
    }
    const med = r1(median(lasts));
    const p99 = r1(percentile(lasts, 99));
    record({
      scenario,
      measure: `push → last poll answered, median of ${lasts.length}`,
      value: med,
      unit: 'ms',
      note: `target ≤ 70 ms: ${verdict(med <= 70)}`,
    });
    record({
      scenario,
      measure: `push → last poll answered, p99 of ${lasts.length}`,
      value: p99,
      unit: 'ms',
      note: `target ≤ 150 ms: ${verdict(p99 <= 150)}`,
    });
    record({
      scenario,
      measure: 'push → each poll answered, p50 / p99',
      value: r1(percentile(each, 50)),
      unit: 'ms',
      note: `p99 ${r1(percentile(each, 99))} ms`,
    });
  } finally {
    await stopAll(hubs);
    await Promise.allSettled(devices.map((d) => d.destroy()));
    await db.drop();
  }
}

interface WorkerReport {
  type: string;
  [key: string]: unknown;
}

/** A bench/idlePolls.ts worker and a way to wait for its next message of a type. */
function idleWorker(hub: Server, count: number, localAddress: string, tag: string) {
  const child: ChildProcess = owned(
    fork(path.join(ROOT, 'bench/idlePolls.ts'), [], {
      cwd: ROOT,
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  const waiting = new Map<string, (m: WorkerReport) => void>();
  child.on('message', (m: WorkerReport) => {
    if (m.type === 'error') throw new Error(`idle worker ${tag}: ${String(m.message)}`);
    waiting.get(m.type)?.(m);
  });
  const next = (type: string) => new Promise<WorkerReport>((resolve) => waiting.set(type, resolve));
  const ask = (command: WorkerReport, reply: string) => {
    const answer = next(reply);
    child.send(command);
    return answer;
  };
  const ready = next('started').then(() =>
    ask({ type: 'setup', url: hub.url, count, localAddress, identity: identity.consumer(`Idle${tag}`) }, 'ready'),
  );
  return { child, ask, next, ready };
}

/**
 * While P4's polls are placed, every 2 s (printed with BENCH_VERBOSE=1): how many wait on the hubs,
 * how many were placed per second since the last sample, and the CPU (ms per second) of the hubs, of
 * their PostgreSQL backends and of the client workers.
 */
function placementSampler(db: Database, hubs: Server[], clients: number[]) {
  let stopped = false;
  const run = (async () => {
    if (!process.env.BENCH_VERBOSE) return;
    const start = performance.now();
    let last = { at: start, waiting: 0, hub: 0, pg: 0, client: 0 };
    const pgCpu = async () => {
      let ms = 0;
      for (const { pid } of await backendsOf(db.admin, hubs)) ms += cpuMs(pid);
      return ms;
    };
    const sum = (pids: number[]) => pids.reduce((s, pid) => s + cpuMs(pid), 0);
    /** System time only (ms): the kernel's share, e.g. binding and connecting sockets. */
    const sysMs = (pids: number[]) =>
      pids.reduce((s, pid) => {
        try {
          const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
          return s + Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[12]) * 10;
        } catch {
          return s;
        }
      }, 0);
    let lastSys = { hub: sysMs(hubs.map((h) => h.pid)), client: sysMs(clients) };
    last = { ...last, hub: sum(hubs.map((h) => h.pid)), pg: await pgCpu(), client: sum(clients) };
    while (!stopped) {
      await sleep(2000);
      const waiting = (await Promise.all(hubs.map(waitingOn))).reduce((s, v) => s + v, 0);
      const now = {
        at: performance.now(),
        waiting,
        hub: sum(hubs.map((h) => h.pid)),
        pg: await pgCpu(),
        client: sum(clients),
      };
      const s = (now.at - last.at) / 1000;
      const nowSys = { hub: sysMs(hubs.map((h) => h.pid)), client: sysMs(clients) };
      const sys = `(sys: hubs ${Math.round((nowSys.hub - lastSys.hub) / s)}, clients ${Math.round((nowSys.client - lastSys.client) / s)})`;
      lastSys = nowSys;
      const placed = now.waiting - last.waiting;
      progress(
        `t=${Math.round((now.at - start) / 1000)} s waiting ${now.waiting} (+${Math.round(placed / s)}/s); CPU ms/s hubs ${Math.round((now.hub - last.hub) / s)}, pg ${Math.round((now.pg - last.pg) / s)}, clients ${Math.round((now.client - last.client) / s)}; ${sys}; hub CPU per placed poll ${placed > 0 ? r2((now.hub - last.hub) / placed) : '-'} ms; load ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}`,
      );
      last = now;
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await run;
    },
  };
}

/**
 * 100,000 (BENCH_IDLE_POLLS) message subscriptions, each long-polled by its own connection, spread over
 * 7 processes; each process's share comes from one worker process bound to its own 127.0.0.x address
 * (each worker picks its sockets' local ports: bench/idlePolls.ts). Then: are they all held, what CPU
 * did placing them take, what do the hubs' resident sets add up to, and how long does one send to All
 * take to reach every poll?
 */
export async function postgresIdlePolls(record: Recorder): Promise<void> {
  const total = Number(process.env.BENCH_IDLE_POLLS ?? (QUICK ? 7000 : 100_000));
  const processes = Number(process.env.BENCH_IDLE_PROCESSES ?? 7);
  const scenario = `P4. ${total} idle polls on ${processes} processes`;
  const db = await freshDatabase();
  // 4 store connections per process instead of 8 keep 7 processes within the shared server's 100.
  const hubs = await startPostgresHubs(db, processes, {
    HUB_PG_POOL_MAX: '4',
    HUB_MAX_POLLS_PER_CREDENTIAL: String(total),
    HUB_MAX_SUBSCRIPTIONS_PER_CREDENTIAL: String(total),
    HUB_SUBSCRIPTION_IDLE_SECONDS: '3600',
  });
  progress(`${processes} processes started`);
  const rssIdle = hubs.reduce((s, h) => s + rssOf(h.pid), 0);
  const workers = hubs.map((hub, i) =>
    idleWorker(hub, Math.floor(total / processes) + (i < total % processes ? 1 : 0), `127.0.0.${10 + i}`, String(i)),
  );
  try {
    await Promise.all(workers.map((w) => w.ready));
    const t0 = performance.now();
    const subscribeBusy = (await Promise.all(workers.map((w) => w.ask({ type: 'subscribe' }, 'subscribed')))).reduce(
      (s, m) => s + Number(m.busy),
      0,
    );
    const subscribeMs = performance.now() - t0;
    const t1 = performance.now();
    progress(`${total} subscribed in ${Math.round(subscribeMs / 1000)} s`);
    const clients = workers.map((w) => w.child.pid ?? 0);
    const sampler = placementSampler(db, hubs, clients);
    const clientsBefore = clients.reduce((s, pid) => s + cpuMs(pid), 0);
    const placing = await cpuDuring(db.admin, hubs, async () => {
      await Promise.all(workers.map((w) => w.ask({ type: 'poll' }, 'polling')));
      progress('every poll sent');
      await waitingPollsOn(hubs, total, 120);
      progress('every poll waiting');
    });
    const pollMs = performance.now() - t1;
    const clientsMs = clients.reduce((s, pid) => s + cpuMs(pid), 0) - clientsBefore;
    const backendsByRole = Object.entries(placing.pgByRole)
      .map(([role, ms]) => `${role} ${r2(ms / total)}`)
      .join(', ');
    await sampler.stop();
    await sleep(5000); // idle: nothing may drop
    const held = (await Promise.all(hubs.map(waitingOn))).reduce((s, v) => s + v, 0);
    const rss = hubs.map((h) => rssOf(h.pid));
    const rssTotal = rss.reduce((s, v) => s + v, 0);
    const pssTotal = hubs.reduce((s, h) => s + pssOf(h.pid), 0);
    const reports = workers.map((w) => w.next('received'));
    const sent = performance.timeOrigin + performance.now();
    const { status } = await httpGet(
      `${hubs[0].url}/rest/consumer/SendMessage?${identity.consumer('Sender')}&scope=All&key=Ping&data=1`,
    );
    if (status !== 204) throw new Error(`send answered ${status}`);
    // Whatever has not arrived after 30 s is reported as it stands.
    const all = Promise.all(reports);
    if ((await Promise.race([all.then(() => true), sleep(30_000).then(() => false)])) === false)
      for (const w of workers) w.child.send({ type: 'report' });
    const got = await all;
    const received = got.reduce((s, m) => s + Number(m.received), 0);
    const renewed = got.reduce((s, m) => s + Number(m.renewed), 0);
    const pollBusy = got.reduce((s, m) => s + Number(m.busy), 0);
    const retried = got.reduce((s, m) => s + Number(m.retried), 0);
    const lastAt = Math.max(...got.map((m) => Number(m.lastAt)));
    const ms = Math.round(lastAt - sent);
    const gib = (b: number) => Math.round((b / 2 ** 30) * 100) / 100;
    record({
      scenario,
      measure: 'polls waiting after 5 s idle',
      value: held,
      unit: 'polls',
      note: `target all ${total}: ${verdict(held >= total)}; ${renewed} renewed after their timeout, ${pollBusy} polls answered 503 and repeated, ${retried} connected again (408 or closed unanswered); subscribing took ${Math.round(subscribeMs / 1000)} s (${subscribeBusy} answered 503 and retried), polling ${Math.round(pollMs / 1000)} s (CPU per poll placed: hubs ${r2(placing.hubMs / total)} ms, their backends ${r2(placing.pgMs / total)} ms (${backendsByRole}), the clients ${r2(clientsMs / total)} ms)`,
    });
    record({
      scenario,
      measure: 'hub processes’ RSS together',
      value: gib(rssTotal),
      unit: 'GiB',
      note: `target ≤ 1.5 GB: ${verdict(rssTotal <= 1.5e9)}; ${gib(rssIdle)} GiB before the polls; per process ${rss.map((r) => Math.round(r / 2 ** 20)).join(', ')} MiB; PSS together (shared pages counted once) ${gib(pssTotal)} GiB`,
    });
    record({
      scenario,
      measure: `send to All → last of ${received} polls answered`,
      value: ms,
      unit: 'ms',
      note: `target all ${total} in ≤ 2 s: ${verdict(received >= total && ms <= 2000)}`,
    });
  } finally {
    for (const w of workers) w.child.kill();
    await stopAll(hubs);
    await db.drop();
  }
}
