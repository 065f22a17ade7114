/**
 * Where a waiting poll's heap goes: heap snapshots of a hub build with N connections idle (each has
 * answered one poll) and then with a poll waiting on each, diffed by constructor per poll. With `fresh`,
 * the first snapshot is taken before the connections exist (as scenario 2 measures RSS: each poll on a
 * new connection), so the diff includes the socket and parser. Usage:
 *   node --import tsx bench/pollHeap.ts dist 3000 /tmp/out [fresh]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serializeConfiguration } from '../src/config/xmlFile.js';
import { testConfiguration } from '../test/support/testHub.js';
import { device, httpGet, identity, sleep } from './support.js';

const [dist = 'dist', nArg = '3000', outDir = os.tmpdir(), mode = 'idle'] = process.argv.slice(2);
const n = Number(nArg);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hub-heap-'));
fs.writeFileSync(path.join(dataDir, 'hub.config.xml'), serializeConfiguration(testConfiguration()));
const proc = spawn(process.execPath, ['--heapsnapshot-signal=SIGUSR2', path.resolve(dist, 'src/cli.js')], {
  cwd: outDir,
  env: {
    ...process.env,
    HUB_DATA_DIR: dataDir,
    HUB_PORT: '0',
    HUB_HOST: '127.0.0.1',
    HUB_LOG_LEVEL: 'warn',
    HUB_MAX_POLLS_PER_CREDENTIAL: '50000',
    HUB_MAX_SUBSCRIPTIONS_PER_CREDENTIAL: '50000',
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const url = await new Promise<string>((resolve) => {
  let out = '';
  proc.stdout.on('data', (c: Buffer) => {
    out += c.toString();
    const m = /hub listening on (http:\/\/\S+)/.exec(out);
    if (m) resolve(m[1]);
  });
});
const ids: string[] = [];
for (let i = 0; i < n; i++)
  ids.push(
    JSON.parse(
      (await httpGet(`${url}/rest/consumer/SubscribeToStateObjects?${identity.consumer('Bench')}&name=N${i}`)).body,
    ) as string,
  );
const devices = ids.map(() => device(url));
const pollPath = (id: string, timeout: number) =>
  `${url}/rest/consumer/GetStateObjects?${identity.consumer('Bench')}&subscriptionId=${id}&timeout=${timeout}`;
// One answered poll per connection first: the connections are in both snapshots, only the waiting differs.
if (mode !== 'fresh') await Promise.all(ids.map((id, i) => httpGet(pollPath(id, 0), devices[i])));

async function snapshot(label: string): Promise<void> {
  const before = new Set(fs.readdirSync(outDir));
  proc.kill('SIGUSR2');
  for (;;) {
    await sleep(500);
    const file = fs.readdirSync(outDir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    if (!file) continue;
    let size = -1;
    while (size !== fs.statSync(path.join(outDir, file)).size) {
      size = fs.statSync(path.join(outDir, file)).size;
      await sleep(1000);
    }
    fs.renameSync(path.join(outDir, file), path.join(outDir, `${label}.heapsnapshot`));
    return;
  }
}

function byConstructor(file: string): Map<string, number> {
  const snap = JSON.parse(fs.readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: string[][] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snap.snapshot.meta.node_fields.length;
  const types = snap.snapshot.meta.node_types[0];
  const sizes = new Map<string, number>();
  for (let i = 0; i < snap.nodes.length; i += fields) {
    const type = types[snap.nodes[i]];
    const key =
      type === 'object' || type === 'closure' || type === 'hidden'
        ? `${type} ${snap.strings[snap.nodes[i + 1]].slice(0, 40)}`
        : type;
    sizes.set(key, (sizes.get(key) ?? 0) + snap.nodes[i + 3]);
  }
  return sizes;
}

await sleep(1000);
await snapshot('idle');
const polls = ids.map((id, i) => httpGet(pollPath(id, 120_000), devices[i]).catch(() => undefined));
// Until every poll has made its first take (HEAP_SETTLE_MS: longer on PostgreSQL, whose takes queue for connections).
await sleep(Number(process.env.HEAP_SETTLE_MS ?? 3000));
await snapshot('waiting');
proc.kill('SIGTERM');
await Promise.allSettled(polls);
await Promise.allSettled(devices.map((d) => d.destroy()));
const idle = byConstructor(path.join(outDir, 'idle.heapsnapshot'));
const waiting = byConstructor(path.join(outDir, 'waiting.heapsnapshot'));
let total = 0;
const rows: [string, number][] = [];
for (const [key, size] of waiting) {
  const perPoll = (size - (idle.get(key) ?? 0)) / n;
  total += perPoll;
  if (Math.abs(perPoll) >= 16) rows.push([key, Math.round(perPoll)]);
}
for (const [key, bytes] of rows.sort((a, b) => b[1] - a[1])) console.log(`${String(bytes).padStart(6)}  ${key}`);
console.log(`${String(Math.round(total)).padStart(6)}  heap per waiting poll`);
process.exit(0);
