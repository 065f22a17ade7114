/**
 * P1's push on PostgreSQL (bench/postgres.ts) for two builds side by side, in alternating turns: each
 * turn measures one SQLite hub of build B (up throughout, the baseline of issue 22's 0.5× target), then
 * `processes` hub processes of build A on a fresh database, then of build B on another. Usage, after
 * `npm run build`, with the other build copied inside the repository so it finds node_modules:
 *   sh bench/withFileLimit.sh node --import tsx bench/postgresPushAB.ts dist .old-dist [turns] [processes,…]
 * Prints per process count each build's median rate, its median ratio to SQLite in the turn, the median
 * of the per-turn ratios A/B, and CPU per push of the hubs and of their PostgreSQL backends (/proc).
 */
import crypto from 'node:crypto';
import autocannon from 'autocannon';
import pg from 'pg';
import type { Server } from './support.js';
import { BENCH_ADMIN_URL, cpuMs, identity, median, startHubProcess } from './support.js';

const [a = 'dist', b = '.old-dist', turns = '5', counts = '1'] = process.argv.slice(2);
const SECONDS = 3;

async function pushRate(hubs: Server[], seconds: number): Promise<{ rate: number; total: number }> {
  let n = 0;
  const results = await Promise.all(
    hubs.map((hub, i) =>
      autocannon({
        url: hub.url,
        connections: Math.floor(64 / hubs.length) + (i < 64 % hubs.length ? 1 : 0),
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
      }),
    ),
  );
  if (results.some((r) => r.non2xx > 0 || r.errors > 0)) throw new Error('a push failed');
  return {
    rate: results.reduce((s, r) => s + r.requests.average, 0),
    total: results.reduce((s, r) => s + r.requests.total, 0),
  };
}

/** `count` hubs of `dist` on a fresh database: rate, hub CPU µs and backend CPU µs per push. */
async function postgresTurn(admin: pg.Client, dist: string, count: number) {
  const name = `hub_ab_${crypto.randomBytes(4).toString('hex')}`;
  await admin.query(`create database ${name}`);
  const url = new URL(BENCH_ADMIN_URL);
  url.pathname = `/${name}`;
  const hubs: Server[] = [];
  try {
    for (let i = 0; i < count; i++) hubs.push(await startHubProcess({ HUB_DATABASE_URL: url.toString() }, [], dist));
    await pushRate(hubs, 1);
    const backends = async () =>
      (await admin.query<{ pid: number }>(`select pid from pg_stat_activity where datname = $1`, [name])).rows.map(
        (r) => r.pid,
      );
    const pgBefore = new Map((await backends()).map((pid) => [pid, cpuMs(pid)]));
    const hubBefore = hubs.map((h) => cpuMs(h.pid));
    const { rate, total } = await pushRate(hubs, SECONDS);
    const hubMs = hubs.reduce((s, h, i) => s + cpuMs(h.pid) - hubBefore[i], 0);
    const pgMs = (await backends()).reduce((s, pid) => s + cpuMs(pid) - (pgBefore.get(pid) ?? 0), 0);
    return { rate, hub: (hubMs * 1000) / total, pg: (pgMs * 1000) / total };
  } finally {
    await Promise.all(hubs.map((h) => h.stop()));
    await admin.query(`drop database if exists ${name} with (force)`);
  }
}

const admin = new pg.Client({ connectionString: BENCH_ADMIN_URL, application_name: 'hub-bench' });
await admin.connect();
const sqlite = await startHubProcess({}, [], b);
const r = (x: number, places = 100) => Math.round(x * places) / places;
try {
  await pushRate([sqlite], 1);
  for (const count of counts.split(',').map(Number)) {
    const rows = { a: [] as number[][], b: [] as number[][], ratio: [] as number[], sqlite: [] as number[] };
    for (let turn = 0; turn < Number(turns); turn++) {
      const s = await pushRate([sqlite], SECONDS);
      const ta = await postgresTurn(admin, a, count);
      const tb = await postgresTurn(admin, b, count);
      rows.sqlite.push(s.rate);
      rows.a.push([ta.rate, ta.rate / s.rate, ta.hub, ta.pg]);
      rows.b.push([tb.rate, tb.rate / s.rate, tb.hub, tb.pg]);
      rows.ratio.push(ta.rate / tb.rate);
      console.error(
        `  turn ${turn + 1}: SQLite ${Math.round(s.rate)}, ${a} ${Math.round(ta.rate)}, ${b} ${Math.round(tb.rate)}`,
      );
    }
    const col = (m: number[][], i: number) => median(m.map((row) => row[i]));
    for (const [label, m] of [
      [a, rows.a],
      [b, rows.b],
    ] as const) {
      console.log(
        `${count} process(es), ${label}: ${Math.round(col(m, 0))} pushes/s, ${r(col(m, 1))}× SQLite (${Math.round(median(rows.sqlite))}/s), CPU per push: hubs ${r(col(m, 2), 10)} µs + backends ${r(col(m, 3), 10)} µs`,
      );
    }
    console.log(`${count} process(es): ${a}/${b} ${r(median(rows.ratio), 1000)} (median of ${turns} turns)`);
  }
} finally {
  await sqlite.stop();
  await admin.end();
}
