/**
 * P3's fan-out on PostgreSQL (bench/postgres.ts) for two builds side by side: 3 hub processes of build A
 * on one fresh database and 3 of build B on another, each with its 1,000 StateObject subscribers
 * (subscriber i subscribed and polling on process i % 3), all up throughout; the rounds alternate
 * between the builds (one push through process round % 3 of the one whose turn it is), so both meet the
 * same load of the box. Usage, after `npm run build`, with the other build copied inside the
 * repository so it finds node_modules:
 *   sh bench/withFileLimit.sh node --import tsx bench/postgresFanoutAB.ts dist .old-dist [rounds per build]
 * HUB_NODE_ARGS (e.g. `--cpu-prof`) goes to every hub's node. Prints per build the median and p99 of push → last answer, the median of the per-pair ratios A/B, and
 * the CPU per round of the hubs and of their PostgreSQL backends (/proc), push → last answer.
 */
import type { Client } from 'undici';
import type { Server } from './support.js';
import { device, httpGet, identity, median, percentile, sleep, subscribeEach } from './support.js';
import type { Database } from './postgresSupport.js';
import { cpuDuring, freshDatabase, startPostgresHubs, stopAll, waitingPollsOn } from './postgresSupport.js';

const [a = 'dist', b = '.old-dist', rounds = '24'] = process.argv.slice(2);
const N = 1000;

interface Side {
  dist: string;
  db: Database;
  hubs: Server[];
  devices: Client[];
  ids: string[];
  lasts: number[];
  hubMs: number[];
  pgMs: number[];
}

const sides: Side[] = [];

async function startSide(dist: string): Promise<Side> {
  const db = await freshDatabase();
  const hubs = await startPostgresHubs(db, 3, {}, dist);
  const side: Side = { dist, db, hubs, devices: [], ids: [], lasts: [], hubMs: [], pgMs: [] };
  // Stopped and dropped at the end even if subscribing fails.
  sides.push(side);
  const on = (i: number) => hubs[i % hubs.length];
  side.devices = Array.from({ length: N }, (_, i) => device(on(i).url));
  side.ids = await subscribeEach(on, N, 'SubscribeToStateObjects', (i) => `${identity.consumer(`G${i}`)}&name=Fan`);
  return side;
}

async function stopSide(side: Side): Promise<void> {
  await stopAll(side.hubs);
  await Promise.allSettled(side.devices.map((d) => d.destroy()));
  await side.db.drop();
}

/** One round of a side: every subscriber polls, one push, until the last answer (ms); the CPU it took is recorded. */
async function round(side: Side, n: number, record: boolean): Promise<number> {
  const { hubs, ids, devices } = side;
  const on = (i: number) => hubs[i % hubs.length];
  const polls = ids.map((id, i) =>
    httpGet(
      `${on(i).url}/rest/consumer/GetStateObjects?${identity.consumer(`G${i}`)}&subscriptionId=${id}&timeout=120000`,
      devices[i],
    ).then((r) => ({ r, t: performance.now() })),
  );
  await waitingPollsOn(hubs, N, 180);
  await sleep(200);
  let sent = 0;
  const {
    result: replies,
    hubMs,
    pgMs,
  } = await cpuDuring(side.db.admin, hubs, async () => {
    sent = performance.now();
    await httpGet(`${on(n).url}/rest/platform/PushStateObject?${identity.package}&name=Fan&value=${n}`);
    return Promise.all(polls);
  });
  const last = Math.max(...replies.map(({ t }) => t - sent));
  if (replies.some(({ r }) => r.body === '[]')) throw new Error('a subscriber missed the push');
  if (record) {
    side.lasts.push(last);
    side.hubMs.push(hubMs);
    side.pgMs.push(pgMs);
  }
  return last;
}

const r1 = (v: number) => Math.round(v * 10) / 10;
try {
  const sa = await startSide(a);
  const sb = await startSide(b);
  // The first round of each answers polls that ran before the object existed: a warm-up.
  await round(sa, 0, false);
  await round(sb, 0, false);
  const ratios: number[] = [];
  for (let n = 1; n <= Number(rounds); n++) {
    // Alternate which build goes first in a pair.
    const first = n % 2 === 0 ? sa : sb;
    const second = first === sa ? sb : sa;
    const t1 = await round(first, n, true);
    const t2 = await round(second, n, true);
    ratios.push(first === sa ? t1 / t2 : t2 / t1);
    console.error(`  pair ${n}: ${first.dist} ${r1(t1)} ms, ${second.dist} ${r1(t2)} ms`);
  }
  for (const side of sides) {
    console.log(
      `${side.dist}: push → last of ${N} answers median ${r1(median(side.lasts))} ms, p99 ${r1(percentile(side.lasts, 99))} ms (${side.lasts.length} rounds); CPU per round: hubs ${r1(median(side.hubMs))} ms + backends ${r1(median(side.pgMs))} ms`,
    );
  }
  console.log(`${a}/${b}: ${Math.round(median(ratios) * 1000) / 1000} (median of ${ratios.length} pairs)`);
} finally {
  for (const side of sides) await stopSide(side);
}
