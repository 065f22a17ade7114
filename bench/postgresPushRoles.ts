/**
 * P1's push (bench/postgres.ts) taken apart, for one or more builds in alternating turns: per process
 * count and client count, the push rate and the CPU per push of the hubs (user and system time, context
 * switches) and of their PostgreSQL backends by role (application_name), pushes per group commit,
 * tail reads and doorbells heard per 100 pushes, and the box's steal and idle time. Usage, after
 * `npm run build` (other builds copied inside the repository so they find node_modules):
 *   sh bench/withFileLimit.sh node --import tsx bench/postgresPushRoles.ts dist[,.old-dist] [turns] [processes,…] [clients,…]
 * SECS sets the seconds measured (3); LOADED=n sends the load to the first n hubs only (the others idle).
 */
import fs from 'node:fs';
import type { Server } from './support.js';
import { cpuMs, median } from './support.js';
import { cpuDuring, freshDatabase, pushLoad, startPostgresHubs, stopAll } from './postgresSupport.js';

/** User and system CPU (ms) and context switches of a process so far. */
function stat(pid: number) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const x = f.slice(f.lastIndexOf(')') + 2).split(' ');
  const st = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return {
    u: Number(x[11]) * 10,
    s: Number(x[12]) * 10,
    vol: Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(st)?.[1]),
    inv: Number(/nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(st)?.[1]),
  };
}

/** The box's steal, idle and total CPU time so far (clock ticks). */
function steal() {
  const l = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/\s+/).slice(1).map(Number);
  return { steal: l[7], total: l.reduce((a, b) => a + b, 0), idle: l[3] };
}

const [dists = 'dist', turns = '3', counts = '1,3', clientsArg = '64'] = process.argv.slice(2);
const SECONDS = Number(process.env.SECS ?? 3);

/** The counters read from each hub's /metrics before and after the measured seconds. */
const COUNTERS = [
  'hub_batch_pieces_sum',
  'hub_batch_pieces_count',
  'hub_postgres_tail_reads',
  'hub_postgres_notification_lag_seconds_count',
] as const;
type Counter = (typeof COUNTERS)[number];

/** Each counter per hub, in `hubs` order. */
async function counters(hubs: Server[]): Promise<Record<Counter, number[]>> {
  const texts = await Promise.all(hubs.map(async (hub) => (await fetch(`${hub.url}/metrics`)).text()));
  const value = (text: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return Object.fromEntries(COUNTERS.map((name) => [name, texts.map((t) => value(t, name))])) as Record<
    Counter,
    number[]
  >;
}

async function turn(dist: string, count: number, clients: number) {
  const db = await freshDatabase();
  const hubs = await startPostgresHubs(db, count, { HUB_METRICS_OPEN: 'true' }, dist);
  const loaded = hubs.slice(0, Number(process.env.LOADED ?? hubs.length));
  try {
    await pushLoad(loaded, clients, 1);
    const before = await counters(hubs);
    const stBefore = hubs.map((h) => stat(h.pid));
    const hubBefore = hubs.map((h) => cpuMs(h.pid));
    const stealBefore = steal();
    const { result, hubMs, pgByRole } = await cpuDuring(db.admin, hubs, () => pushLoad(loaded, clients, SECONDS));
    const { total } = result;
    const stAfter = hubs.map((h) => stat(h.pid));
    const stealAfter = steal();
    const after = await counters(hubs);
    const delta = (name: Counter) => after[name].map((v, i) => v - before[name][i]);
    const sum = (name: Counter) => delta(name).reduce((s, v) => s + v, 0);
    console.error(
      '   per hub µs/push',
      hubs.map((h, i) => Math.round((((cpuMs(h.pid) - hubBefore[i]) * 1000) / total) * 10) / 10).join(' '),
      'tail reads',
      delta('hub_postgres_tail_reads').join(' '),
    );
    const d = (k: 'u' | 's' | 'vol' | 'inv') => stAfter.reduce((a, x, i) => a + x[k] - stBefore[i][k], 0);
    const ticks = stealAfter.total - stealBefore.total;
    return {
      rate: result.perSecond,
      hub: (hubMs * 1000) / total,
      extra: {
        user: (d('u') * 1000) / total,
        sys: (d('s') * 1000) / total,
        vol: d('vol') / total,
        inv: d('inv') / total,
        stealPct: (100 * (stealAfter.steal - stealBefore.steal)) / ticks,
        idlePct: (100 * (stealAfter.idle - stealBefore.idle)) / ticks,
        heardPer100: (sum('hub_postgres_notification_lag_seconds_count') * 100) / total,
      },
      byRole: Object.fromEntries(Object.entries(pgByRole).map(([role, ms]) => [role, (ms * 1000) / total])),
      batch: sum('hub_batch_pieces_sum') / sum('hub_batch_pieces_count'),
      tailPer100: (sum('hub_postgres_tail_reads') * 100) / total,
    };
  } finally {
    await stopAll(hubs);
    await db.drop();
  }
}

const r = (x: number) => Math.round(x * 10) / 10;
for (const clients of clientsArg.split(',').map(Number))
  for (const count of counts.split(',').map(Number)) {
    const acc = new Map<string, Awaited<ReturnType<typeof turn>>[]>();
    for (let t = 0; t < Number(turns); t++)
      for (const dist of dists.split(',')) {
        const x = await turn(dist, count, clients);
        acc.set(dist, [...(acc.get(dist) ?? []), x]);
        console.error(
          `  ${dist} ${count}p ${clients}c: ${Math.round(x.rate)}/s hub ${r(x.hub)} ${JSON.stringify(Object.fromEntries(Object.entries(x.byRole).map(([k, v]) => [k, r(v)])))} batch ${r(x.batch)} tail/100 ${r(x.tailPer100)} ${JSON.stringify(Object.fromEntries(Object.entries(x.extra).map(([k, v]) => [k, Math.round(v * 100) / 100])))}`,
        );
      }
    for (const [dist, xs] of acc) {
      const roleNames = [...new Set(xs.flatMap((x) => Object.keys(x.byRole)))];
      const rolesMed = roleNames.map((k) => `${k} ${r(median(xs.map((x) => x.byRole[k] ?? 0)))}`).join(', ');
      console.log(
        `${dist} ${count} proc ${clients} clients: ${Math.round(median(xs.map((x) => x.rate)))}/s; hub ${r(median(xs.map((x) => x.hub)))} µs; backends: ${rolesMed}; batch ${r(median(xs.map((x) => x.batch)))}; tail/100 ${r(median(xs.map((x) => x.tailPer100)))}`,
      );
    }
  }
