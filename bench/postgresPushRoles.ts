/** Scratch diag (helper 2): P1 push per process count, CPU per push by role. */
import crypto from 'node:crypto';
import autocannon from 'autocannon';
import pg from 'pg';
import type { Server } from './support.js';
import fs from 'node:fs';
import { BENCH_ADMIN_URL, cpuMs, identity, median, startHubProcess } from './support.js';
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
function steal() {
  const l = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/\s+/).slice(1).map(Number);
  return { steal: l[7], total: l.reduce((a, b) => a + b, 0), idle: l[3] };
}

const [dists = 'dist', turns = '3', counts = '1,3', clientsArg = '64'] = process.argv.slice(2);
const SECONDS = Number(process.env.SECS ?? 3);
const nodeArgs = process.env.HUB_NODE_ARGS?.split(' ').filter(Boolean) ?? [];

async function pushRate(all: Server[], clients: number, seconds: number) {
  const hubs = all.slice(0, Number(process.env.LOADED ?? all.length));
  const results = await Promise.all(
    hubs.map((hub, i) => {
      let n = i * 1_000_000;
      return autocannon({
        url: hub.url,
        connections: Math.floor(clients / hubs.length) + (i < clients % hubs.length ? 1 : 0),
        duration: seconds,
        requests: [
          {
            method: 'GET',
            setupRequest: (req) => ({
              ...req,
              path: `/rest/platform/PushStateObject?${identity.package}&name=K${n % 100}&value=${n++}`,
            }),
          },
        ],
      });
    }),
  );
  if (results.some((r) => r.non2xx > 0 || r.errors > 0)) throw new Error('a push failed');
  return {
    rate: results.reduce((s, r) => s + r.requests.average, 0),
    total: results.reduce((s, r) => s + r.requests.total, 0),
  };
}

async function metric(hub: Server, name: string): Promise<number> {
  const text = await (await fetch(`${hub.url}/metrics`)).text();
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
}

async function roles(admin: pg.Client, hubs: Server[]) {
  const { rows } = await admin.query<{ pid: number; application_name: string }>(
    `select pid, application_name from pg_stat_activity where application_name like any($1::text[])`,
    [hubs.map((h) => `hub:${h.pid}:%`)],
  );
  return new Map(rows.map((r) => [r.pid, { role: r.application_name.split(':')[2], ms: cpuMs(r.pid) }]));
}

async function turn(admin: pg.Client, dist: string, count: number, clients: number) {
  const name = `hub_h2_${crypto.randomBytes(4).toString('hex')}`;
  await admin.query(`create database ${name}`);
  const url = new URL(BENCH_ADMIN_URL);
  url.pathname = `/${name}`;
  const hubs: Server[] = [];
  try {
    for (let i = 0; i < count; i++)
      hubs.push(await startHubProcess({ HUB_DATABASE_URL: url.toString(), HUB_METRICS_OPEN: 'true' }, nodeArgs, dist));
    await pushRate(hubs, clients, 1);
    const before = await roles(admin, hubs);
    const hubBefore = hubs.map((h) => cpuMs(h.pid));
    const stBefore = hubs.map((h) => stat(h.pid));
    const stealBefore = steal();
    const sumBefore = await Promise.all(hubs.map((h) => metric(h, 'hub_batch_pieces_sum')));
    const cntBefore = await Promise.all(hubs.map((h) => metric(h, 'hub_batch_pieces_count')));
    const tailBefore = await Promise.all(hubs.map((h) => metric(h, 'hub_postgres_tail_reads')));
    const heardBefore = await Promise.all(hubs.map((h) => metric(h, 'hub_postgres_notification_lag_seconds_count')));
    const { rate, total } = await pushRate(hubs, clients, SECONDS);
    console.error(
      '   per hub µs/push',
      hubs.map((h, i) => Math.round((((cpuMs(h.pid) - hubBefore[i]) * 1000) / total) * 10) / 10).join(' '),
      'tail reads',
      (await Promise.all(hubs.map((h) => metric(h, 'hub_postgres_tail_reads'))))
        .map((v, i) => v - tailBefore[i])
        .join(' '),
    );
    const hubMs = hubs.reduce((s, h, i) => s + cpuMs(h.pid) - hubBefore[i], 0);
    const stAfter = hubs.map((h) => stat(h.pid));
    const stealAfter = steal();
    const d = (k: 'u' | 's' | 'vol' | 'inv') => stAfter.reduce((a, x, i) => a + x[k] - stBefore[i][k], 0);
    const extra = {
      user: (d('u') * 1000) / total,
      sys: (d('s') * 1000) / total,
      vol: d('vol') / total,
      inv: d('inv') / total,
      stealPct: (100 * (stealAfter.steal - stealBefore.steal)) / (stealAfter.total - stealBefore.total),
      idlePct: (100 * (stealAfter.idle - stealBefore.idle)) / (stealAfter.total - stealBefore.total),
    };
    const after = await roles(admin, hubs);
    const byRole: Record<string, number> = {};
    for (const [pid, { role, ms }] of after)
      byRole[role] = (byRole[role] ?? 0) + ((ms - (before.get(pid)?.ms ?? 0)) * 1000) / total;
    const sum = (await Promise.all(hubs.map((h) => metric(h, 'hub_batch_pieces_sum')))).reduce(
      (s, v, i) => s + v - sumBefore[i],
      0,
    );
    const cnt = (await Promise.all(hubs.map((h) => metric(h, 'hub_batch_pieces_count')))).reduce(
      (s, v, i) => s + v - cntBefore[i],
      0,
    );
    const tails = (await Promise.all(hubs.map((h) => metric(h, 'hub_postgres_tail_reads')))).reduce(
      (s, v, i) => s + v - tailBefore[i],
      0,
    );
    const heard = (await Promise.all(hubs.map((h) => metric(h, 'hub_postgres_notification_lag_seconds_count')))).reduce(
      (s, v, i) => s + v - heardBefore[i],
      0,
    );
    return {
      rate,
      hub: (hubMs * 1000) / total,
      extra: { ...extra, heardPer100: (heard * 100) / total },
      byRole,
      batch: sum / cnt,
      tailPer100: (tails * 100) / total,
    };
  } finally {
    await Promise.all(hubs.map((h) => h.stop()));
    await admin.query(`drop database if exists ${name} with (force)`);
  }
}

const admin = new pg.Client({ connectionString: BENCH_ADMIN_URL, application_name: 'hub-bench' });
await admin.connect();
const r = (x: number) => Math.round(x * 10) / 10;
try {
  for (const clients of clientsArg.split(',').map(Number))
    for (const count of counts.split(',').map(Number)) {
      const acc = new Map<string, Awaited<ReturnType<typeof turn>>[]>();
      for (let t = 0; t < Number(turns); t++)
        for (const dist of dists.split(',')) {
          const x = await turn(admin, dist, count, clients);
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
} finally {
  await admin.end();
}
