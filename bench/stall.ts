/**
 * The worst event-loop stall one authenticated caller can provoke (issue 13): a hub in this process,
 * the event loop's delay sampled every millisecond (perf_hooks), and one hostile scenario at a time.
 * Run: `node --import tsx bench/stall.ts` (not part of `npm run bench`: absolute milliseconds on this
 * machine, reported as the maximum delay seen during each scenario). SUBS sets the number of
 * concurrent subscriptions (300), SUB_FILTER their name filter (a hostile `a{200}*a{31}b` by default).
 * The client runs in the same process: its own work is in the numbers (small for one request at a time).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { serializeConfiguration } from '../src/config/xmlFile.js';
import { startHub } from '../src/createHub.js';
import { createLogger } from '../src/logger.js';
import { hubOptions } from '../src/settings.js';
import { DEV_KEY, testConfiguration } from '../test/support/testHub.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hub-stall-'));
const config = testConfiguration();
const dev = config.credentials.find((c) => c.name === 'Dev');
if (!dev) throw new Error('no Dev credential');
dev.authorizations.messages = {
  defaultAuthorization: 'Deny',
  rules: [
    { id: '1', authorization: 'Allow', scope: '*', args: '*', messageKey: '*Light*On*' },
    { id: '2', authorization: 'Allow', scope: '*', args: '*', messageKey: `*${'a'.repeat(120)}b*` },
  ],
};
fs.writeFileSync(path.join(dataDir, 'hub.config.xml'), serializeConfiguration(config));
const BODY_BYTES = Number(process.env.BODY_BYTES ?? 1024 * 1024);
const options = hubOptions({
  dataDir,
  host: '127.0.0.1',
  port: 0,
  logLevel: 'silent',
  authFailureDelayMs: 0,
  maxPollsPerCredential: 2000,
  bodyLimitBytes: BODY_BYTES,
});
const hub = await startHub(options, createLogger('silent'));
const platform = `SentinelName=S1&PackageName=P1&AccessKey=${DEV_KEY}`;
const consumer = `SentinelName=Consumer&PackageName=Stall&AccessKey=${DEV_KEY}`;
const url = (action: string, query: string) => `${hub.url}/rest/${action}?${query}`;

async function request(method: string, target: string, body?: string): Promise<number> {
  const response = await fetch(target, {
    method,
    body,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
  });
  await response.arrayBuffer();
  return response.status;
}

const results: { scenario: string; maxMs: number; p99Ms: number; statuses: string }[] = [];
async function scenario(name: string, run: () => Promise<number[]>): Promise<void> {
  console.error(`… ${name}`);
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const statuses = await run();
  histogram.disable();
  const counts = new Map<number, number>();
  for (const s of statuses) counts.set(s, (counts.get(s) ?? 0) + 1);
  results.push({
    scenario: name,
    maxMs: Math.round(histogram.max / 1e5) / 10,
    p99Ms: Math.round(histogram.percentile(99) / 1e5) / 10,
    statuses: [...counts].map(([s, n]) => `${n}×${s}`).join(' '),
  });
  console.error(JSON.stringify(results[results.length - 1]));
}

/** One request after the other: the stall measured is that of a single request. */
async function times<T>(n: number, f: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i++) out.push(await f(i));
  return out;
}
const together = <T>(n: number, f: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => f(i)));

await scenario('idle (baseline)', async () => {
  await sleep(500);
  return [];
});
await scenario(`20 pushes of ${BODY_BYTES / 1024} KiB strict JSON (as many small keys as fit)`, async () => {
  const value = Object.fromEntries(Array.from({ length: Math.ceil(BODY_BYTES / 20) }, (_, i) => [`k${i}`, i]));
  const body = JSON.stringify({ Name: 'Big', Value: value }).slice(0, BODY_BYTES - 100);
  const fitted = `${body.slice(0, body.lastIndexOf(','))}}}`;
  return times(20, () => request('POST', url('platform/PushStateObject', platform), fitted));
});
await scenario(`20 pushes of ~${BODY_BYTES / 1024} KiB lenient JSON (JSON5 fallback)`, async () => {
  const body = `{Name:'Big5',Value:[${Array.from({ length: 90_000 }, (_, i) => `'v${i}'`).join(',')},],}`;
  return times(20, () =>
    request(
      'POST',
      url('platform/PushStateObject', platform),
      body.slice(0, BODY_BYTES - 10).replace(/,'[^']*$/, ',],}'),
    ),
  );
});
await scenario('20 sends, 1024-char keys against *Light*On* and *a{120}b*', async () => {
  const keys = ['Light'.repeat(204), 'a'.repeat(1024)];
  return times(20, (i) =>
    request(
      'POST',
      url('consumer/SendMessage', consumer),
      JSON.stringify({ Scope: { Scope: 'All' }, Key: keys[i % 2] }),
    ),
  );
});
// 2,000 StateObjects with 1024-character names, then 256-character filters built to make GLOB work hardest.
for (let batch = 0; batch < 20; batch++) {
  await times(100, (i) =>
    request(
      'POST',
      url('platform/PushStateObject', platform),
      JSON.stringify({ Name: `${'a'.repeat(1000)}${String(batch * 100 + i).padStart(24, '0')}`, Value: 1 }),
    ),
  );
}
const hostileFilter = encodeURIComponent(`${'a'.repeat(200)}*${'a'.repeat(31)}b`);
await scenario('20 RequestStateObjects, filter a{200}*a{31}b (the worst allowed) over 2,000 1 KB names', async () =>
  times(20, () => request('GET', url('consumer/RequestStateObjects', `${consumer}&name=${hostileFilter}`))),
);
await scenario('20 RequestStateObjects, filter * over the same 2,000 objects (2 MB answers)', async () =>
  times(20, () => request('GET', url('consumer/RequestStateObjects', `${consumer}&name=*`))),
);
await scenario('20 RequestStateObjects, filter *a*a*a…b (32 stars)', async () =>
  times(20, () =>
    request(
      'GET',
      url('consumer/RequestStateObjects', `${consumer}&name=${encodeURIComponent(`${'*a'.repeat(31)}*b`)}`),
    ),
  ),
);
const waiting: Promise<number>[] = [];
const SUBS = Number(process.env.SUBS ?? 300);
await scenario(
  `${SUBS} subscriptions with filter ${process.env.SUB_FILTER ?? 'a{200}*a{31}b'}, first polls at once`,
  async () => {
    const ids = await together(SUBS, async (i) => {
      const response = await fetch(
        url(
          'consumer/SubscribeToStateObjects',
          `SentinelName=Consumer&PackageName=W${i}&AccessKey=${DEV_KEY}&name=${process.env.SUB_FILTER ?? hostileFilter}`,
        ),
      );
      return (await response.json()) as string;
    });
    for (const [i, id] of ids.entries()) {
      waiting.push(
        request(
          'GET',
          url(
            'consumer/GetStateObjects',
            `SentinelName=Consumer&PackageName=W${i}&AccessKey=${DEV_KEY}&subscriptionId=${id}&timeout=20000`,
          ),
        ),
      );
    }
    await sleep(1000);
    return [];
  },
);
await scenario(`20 pushes of 1 KB names each matched against those ${SUBS} waiting filters`, async () =>
  times(20, (i) =>
    request(
      'POST',
      url('platform/PushStateObject', platform),
      JSON.stringify({ Name: `${'a'.repeat(1000)}${String(i).padStart(24, '0')}`, Value: 2 }),
    ),
  ),
);
let manyId = '';
await scenario('one subscription given 1,000 wildcard filters (subscriptionId reused)', async () => {
  const subscribe = (query: string) =>
    fetch(url('consumer/SubscribeToStateObjects', `${consumer}&${query}`)).then(
      async (r) => (await r.json()) as string,
    );
  manyId = await subscribe(`name=${encodeURIComponent('F0*x')}`);
  return times(999, async (i) =>
    (await subscribe(`subscriptionId=${manyId}&name=${encodeURIComponent(`F${i + 1}*${'a'.repeat(31)}b`)}`)) === manyId
      ? 200
      : 0,
  );
});
await scenario('its first poll (1,000 filters over 2,000 objects)', async () => [
  await request('GET', url('consumer/GetStateObjects', `${consumer}&subscriptionId=${manyId}&timeout=0`)),
]);
await scenario('20 pushes matched against its 1,000 filters while it waits', async () => {
  const first = 200;
  const poll = request('GET', url('consumer/GetStateObjects', `${consumer}&subscriptionId=${manyId}&timeout=20000`));
  await sleep(200);
  const pushes = await times(20, (i) =>
    request(
      'POST',
      url('platform/PushStateObject', platform),
      JSON.stringify({ Name: `F${i}${'a'.repeat(1000)}`, Value: 3 }),
    ),
  );
  return [first, ...pushes, await poll];
});
await scenario('200 pushes by query string, 8 KB values', async () =>
  times(200, (i) =>
    request(
      'GET',
      url(
        'platform/PushStateObject',
        `${platform}&name=Q${i}&value=${encodeURIComponent(JSON.stringify('v'.repeat(8000)))}`,
      ),
    ),
  ),
);
await scenario(`stop: ${SUBS} waiting polls answered`, async () => {
  const stopping = hub.stop();
  const statuses = await Promise.all(waiting.map((w) => w.catch(() => 0)));
  await stopping;
  return statuses;
});
console.table(results);
fs.rmSync(dataDir, { recursive: true, force: true });
