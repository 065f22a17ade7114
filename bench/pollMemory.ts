/**
 * Waiting long-polls only, two builds side by side (A/B in alternating turns): RSS per idle poller,
 * wake-up latency at 1,000 pollers and StateObject fan-out to 1,000. Usage (after `npm run build`, with
 * an older build copied elsewhere inside the repository so it finds node_modules):
 *   sh bench/withFileLimit.sh node --import tsx bench/pollMemory.ts dist .old-dist [turns] [pollers]
 * POLLMEM_RSS_ONLY=1 measures the RSS per idle poller only (a turn then takes seconds, not a minute).
 */
import { device, httpGet, identity, median, percentile, rssOf, sleep, startHubProcess } from './support.js';
import type { Server } from './support.js';

const ADMIN = 'SentinelName=Management&PackageName=Bench&AccessKey=admin-key-0001';

const startBuild = (dist: string): Promise<Server> => startHubProcess({}, [], dist);

async function waiting(hub: Server, atLeast: number): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const { body } = await httpGet(`${hub.url}/metrics?${ADMIN}`);
    if (Number(/hub_waiting_long_polls (\d+)/.exec(body)?.[1] ?? 0) >= atLeast) return;
    await sleep(100);
  }
  throw new Error(`fewer than ${atLeast} polls waiting`);
}

async function subscribeAll(hub: Server, n: number, query: (i: number) => string): Promise<string[]> {
  const ids: string[] = new Array(n);
  let next = 0;
  await Promise.all(Array.from({ length: 64 }, async () => {
    while (next < n) {
      const i = next++;
      ids[i] = JSON.parse((await httpGet(`${hub.url}/rest/consumer/SubscribeToStateObjects?${query(i)}`)).body) as string;
    }
  }));
  return ids;
}

/** RSS per waiting poller (KB), then wake-up latency from sending a push (p50, p99 ms) on the same hub when n is small. */
async function pollers(dist: string, n: number, wakeups: number): Promise<{ kb: number; p50?: number; p99?: number }> {
  const hub = await startBuild(dist);
  const ids = await subscribeAll(hub, n, (i) => `${identity.consumer('Bench')}&name=N${i}`);
  await sleep(300);
  const before = rssOf(hub.pid);
  const arrived = new Map<number, (t: number) => void>();
  let running = true;
  const devices = ids.map(() => device(hub.url));
  const loops = ids.map(async (id, i) => {
    while (running) {
      const res = await httpGet(`${hub.url}/rest/consumer/GetStateObjects?${identity.consumer('Bench')}&subscriptionId=${id}&timeout=120000`, devices[i]).catch(() => undefined);
      const t = performance.now();
      if (res && res.body !== '[]') arrived.get(i)?.(t);
    }
  });
  await waiting(hub, n);
  await sleep(500);
  const kb = Math.round((rssOf(hub.pid) - before) / n / 102.4) / 10;
  const times: number[] = [];
  for (let k = 0; k < wakeups; k++) {
    const i = Math.floor(Math.random() * n);
    const answered = new Promise<number>((resolve) => arrived.set(i, resolve));
    const sent = performance.now();
    await httpGet(`${hub.url}/rest/platform/PushStateObject?${identity.package}&name=N${i}&value=${k}`);
    times.push((await answered) - sent);
    arrived.delete(i);
    await sleep(5);
  }
  running = false;
  await hub.stop();
  await Promise.allSettled(loops);
  await Promise.allSettled(devices.map((d) => d.destroy()));
  const r = (v: number) => Math.round(v * 100) / 100;
  return wakeups ? { kb, p50: r(percentile(times, 50)), p99: r(percentile(times, 99)) } : { kb };
}

async function fanOut(dist: string, n: number): Promise<number> {
  const hub = await startBuild(dist);
  const ids = await subscribeAll(hub, n, (i) => `${identity.consumer(`G${i}`)}&name=Fan`);
  const devices = ids.map(() => device(hub.url));
  const times: number[] = [];
  for (let round = 0; round < 7; round++) {
    const polls = ids.map((id, i) => httpGet(`${hub.url}/rest/consumer/GetStateObjects?${identity.consumer(`G${i}`)}&subscriptionId=${id}&timeout=60000`, devices[i]));
    await waiting(hub, n);
    const sent = performance.now();
    await httpGet(`${hub.url}/rest/platform/PushStateObject?${identity.package}&name=Fan&value=${round}`);
    const replies = await Promise.all(polls.map((p) => p.then((r) => ({ r, t: performance.now() }))));
    if (replies.some(({ r }) => r.body === '[]')) throw new Error('a subscriber missed the push');
    times.push(Math.max(...replies.map(({ t }) => t)) - sent);
  }
  await hub.stop();
  await Promise.allSettled(devices.map((d) => d.destroy()));
  return Math.round(median(times) * 10) / 10;
}

const [a = 'dist', b, turnsArg = '3', nArg = '10000'] = process.argv.slice(2);
const builds = b ? [a, b] : [a];
const kbs = new Map<string, number[]>(builds.map((d) => [d, []]));
for (let turn = 0; turn < Number(turnsArg); turn++) {
  for (const dist of turn % 2 ? [...builds].reverse() : builds) {
    const big = await pollers(dist, Number(nArg), 0);
    kbs.get(dist)?.push(big.kb);
    if (process.env.POLLMEM_RSS_ONLY === '1') {
      console.log(JSON.stringify({ turn, dist, kbPerPoller: big.kb }));
      continue;
    }
    const small = await pollers(dist, 1000, 200);
    const fan = await fanOut(dist, 1000);
    console.log(JSON.stringify({ turn, dist, kbPerPoller: big.kb, wake1000: small, kbAt1000: small.kb, stateObjectFanOut1000ms: fan }));
  }
}
for (const [dist, values] of kbs) console.log(`${dist}: RSS per idle poller, median of ${values.length}: ${median(values)} KB (${values.join(' / ')})`);
