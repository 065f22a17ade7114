/**
 * Push throughput of two builds side by side, in alternating turns with both hubs up (a slow moment of
 * the shared machine hits both sides of a ratio alike). Usage, after `npm run build`, with the other
 * build copied inside the repository so it finds node_modules:
 *   sh bench/withFileLimit.sh node --import tsx bench/pushAB.ts dist .old-dist [turns] [connections,…]
 * Prints per connection count the median rate of each build and the median of the per-turn ratios, and
 * the same for each hub's CPU time per push (from /proc: less moved than rates when others load the machine).
 */
import autocannon from 'autocannon';
import fs from 'node:fs';
import type { Server } from './support.js';
import { identity, median, startHubProcess } from './support.js';

const [a = 'dist', b = '.old-dist', turns = '5', connections = '1,64'] = process.argv.slice(2);

/** User and system CPU time of a process so far, in µs (clock ticks of 10 ms). */
function cpuMicros(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** Pushes for 3 s: the rate, and the hub's CPU time per push in µs. */
async function pushRate(hub: Server, clients: number): Promise<{ rate: number; cpu: number }> {
  let n = 0;
  const cpuBefore = cpuMicros(hub.pid);
  const result = await autocannon({
    url: hub.url,
    connections: clients,
    duration: 3,
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
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rate: result.requests.average, cpu: (cpuMicros(hub.pid) - cpuBefore) / result.requests.total };
}

const hubA = await startHubProcess({}, [], a);
const hubB = await startHubProcess({}, [], b);
for (const clients of connections.split(',').map(Number)) {
  const rates: { a: number[]; b: number[]; ratio: number[] } = { a: [], b: [], ratio: [] };
  const cpu: { a: number[]; b: number[]; ratio: number[] } = { a: [], b: [], ratio: [] };
  for (let turn = 0; turn < Number(turns); turn++) {
    const pushA = await pushRate(hubA, clients);
    const pushB = await pushRate(hubB, clients);
    rates.a.push(pushA.rate);
    rates.b.push(pushB.rate);
    rates.ratio.push(pushA.rate / pushB.rate);
    cpu.a.push(pushA.cpu);
    cpu.b.push(pushB.cpu);
    cpu.ratio.push(pushA.cpu / pushB.cpu);
  }
  const round = (x: number, places = 1000) => Math.round(x * places) / places;
  console.log(
    JSON.stringify({
      clients,
      [a]: median(rates.a),
      [b]: median(rates.b),
      ratio: round(median(rates.ratio)),
      cpuPerPushUs: { [a]: round(median(cpu.a), 10), [b]: round(median(cpu.b), 10), ratio: round(median(cpu.ratio)) },
    }),
  );
}
await hubA.stop();
await hubB.stop();
