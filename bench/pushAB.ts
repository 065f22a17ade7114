/**
 * Push throughput of two builds side by side, in alternating turns with both hubs up (a slow moment of
 * the shared machine hits both sides of a ratio alike). Usage, after `npm run build`, with the other
 * build copied inside the repository so it finds node_modules:
 *   sh bench/withFileLimit.sh node --import tsx bench/pushAB.ts dist .old-dist [turns] [connections,…]
 * Prints per connection count the median rate of each build and the median of the per-turn ratios.
 */
import autocannon from 'autocannon';
import { identity, median, startHubProcess } from './support.js';

const [a = 'dist', b = '.old-dist', turns = '5', connections = '1,64'] = process.argv.slice(2);

async function pushRate(url: string, clients: number): Promise<number> {
  let n = 0;
  const result = await autocannon({
    url,
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
  return result.requests.average;
}

const hubA = await startHubProcess({}, [], a);
const hubB = await startHubProcess({}, [], b);
for (const clients of connections.split(',').map(Number)) {
  const rates: { a: number[]; b: number[]; ratio: number[] } = { a: [], b: [], ratio: [] };
  for (let turn = 0; turn < Number(turns); turn++) {
    const rateA = await pushRate(hubA.url, clients);
    const rateB = await pushRate(hubB.url, clients);
    rates.a.push(rateA);
    rates.b.push(rateB);
    rates.ratio.push(rateA / rateB);
  }
  const ratio = Math.round(median(rates.ratio) * 1000) / 1000;
  console.log(JSON.stringify({ clients, [a]: median(rates.a), [b]: median(rates.b), ratio }));
}
await hubA.stop();
await hubB.stop();
