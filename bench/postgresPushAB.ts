/**
 * P1's push on PostgreSQL (bench/postgres.ts) for two builds side by side, in alternating turns: each
 * turn measures one SQLite hub of build B (up throughout, the baseline of issue 22's 0.5× target), then
 * `processes` hub processes of build A on a fresh database, then of build B on another. Usage, after
 * `npm run build`, with the other build copied inside the repository so it finds node_modules:
 *   sh bench/withFileLimit.sh node --import tsx bench/postgresPushAB.ts dist .old-dist [turns] [processes,…]
 * Prints per process count each build's median rate, its median ratio to SQLite in the turn, the median
 * of the per-turn ratios A/B, and CPU per push of the hubs and of their PostgreSQL backends (/proc).
 */
import { median, startHubProcess } from './support.js';
import { cpuDuring, freshDatabase, pushLoad, startPostgresHubs, stopAll } from './postgresSupport.js';

const [a = 'dist', b = '.old-dist', turns = '5', counts = '1'] = process.argv.slice(2);
const SECONDS = 3;

/** `count` hubs of `dist` on a fresh database: rate, hub CPU µs and backend CPU µs per push. */
async function postgresTurn(dist: string, count: number) {
  const db = await freshDatabase();
  const hubs = await startPostgresHubs(db, count, {}, dist);
  try {
    await pushLoad(hubs, 64, 1);
    const { result, hubMs, pgMs } = await cpuDuring(db.admin, hubs, () => pushLoad(hubs, 64, SECONDS));
    return { rate: result.perSecond, hub: (hubMs * 1000) / result.total, pg: (pgMs * 1000) / result.total };
  } finally {
    await stopAll(hubs);
    await db.drop();
  }
}

const sqlite = await startHubProcess({}, [], b);
const r = (x: number, places = 100) => Math.round(x * places) / places;
try {
  await pushLoad([sqlite], 64, 1);
  for (const count of counts.split(',').map(Number)) {
    const rows = { a: [] as number[][], b: [] as number[][], ratio: [] as number[], sqlite: [] as number[] };
    for (let turn = 0; turn < Number(turns); turn++) {
      const s = await pushLoad([sqlite], 64, SECONDS);
      const ta = await postgresTurn(a, count);
      const tb = await postgresTurn(b, count);
      rows.sqlite.push(s.perSecond);
      rows.a.push([ta.rate, ta.rate / s.perSecond, ta.hub, ta.pg]);
      rows.b.push([tb.rate, tb.rate / s.perSecond, tb.hub, tb.pg]);
      rows.ratio.push(ta.rate / tb.rate);
      console.error(
        `  turn ${turn + 1}: SQLite ${Math.round(s.perSecond)}, ${a} ${Math.round(ta.rate)}, ${b} ${Math.round(tb.rate)}`,
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
}
