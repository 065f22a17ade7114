/**
 * Waiting long-polls only, two builds side by side (A/B in alternating turns): RSS per idle poller,
 * wake-up latency at 1,000 pollers and StateObject fan-out to 1,000. Usage (after `npm run build`, with
 * an older build copied elsewhere inside the repository so it finds node_modules):
 *   sh bench/withFileLimit.sh node --import tsx bench/pollMemory.ts dist .old-dist [turns] [pollers]
 * POLLMEM_RSS_ONLY=1 measures the RSS per idle poller only (a turn then takes seconds, not a minute).
 */
import {
  device,
  httpGet,
  identity,
  median,
  percentile,
  pollEachObject,
  rssOf,
  sleep,
  startHubProcess,
  subscribeEach,
  waitingPolls,
} from './support.js';
import type { Server } from './support.js';

const startBuild = (dist: string): Promise<Server> => startHubProcess({}, [], dist);

/** RSS per waiting poller (KB), then wake-up latency from sending a push (p50, p99 ms) on the same hub when n is small. */
async function pollers(dist: string, n: number, wakeups: number): Promise<{ kb: number; p50?: number; p99?: number }> {
  const hub = await startBuild(dist);
  const ids = await subscribeEach(hub, n, 'SubscribeToStateObjects', (i) => `${identity.consumer('Bench')}&name=N${i}`);
  await sleep(300);
  const before = rssOf(hub.pid);
  const { arrived, close } = pollEachObject(hub, ids);
  await waitingPolls(hub, n);
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
  await close();
  const r = (v: number) => Math.round(v * 100) / 100;
  return wakeups ? { kb, p50: r(percentile(times, 50)), p99: r(percentile(times, 99)) } : { kb };
}

async function fanOut(dist: string, n: number): Promise<number> {
  const hub = await startBuild(dist);
  const ids = await subscribeEach(hub, n, 'SubscribeToStateObjects', (i) => `${identity.consumer(`G${i}`)}&name=Fan`);
  const devices = ids.map(() => device(hub.url));
  const times: number[] = [];
  for (let round = 0; round < 7; round++) {
    const polls = ids.map((id, i) =>
      httpGet(
        `${hub.url}/rest/consumer/GetStateObjects?${identity.consumer(`G${i}`)}&subscriptionId=${id}&timeout=60000`,
        devices[i],
      ),
    );
    await waitingPolls(hub, n);
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
    console.log(
      JSON.stringify({
        turn,
        dist,
        kbPerPoller: big.kb,
        wake1000: small,
        kbAt1000: small.kb,
        stateObjectFanOut1000ms: fan,
      }),
    );
  }
}
for (const [dist, values] of kbs)
  console.log(`${dist}: RSS per idle poller, median of ${values.length}: ${median(values)} KB (${values.join(' / ')})`);
