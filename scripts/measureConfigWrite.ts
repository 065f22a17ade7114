/**
 * Measures one management write (POST credentials, changing one credential's key) on a configuration of
 * N credentials: its wall time, and how long it blocks the event loop (the longest gap between the ticks
 * of a 1 ms interval, and perf_hooks' monitorEventLoopDelay maximum) while it runs. Not a test: numbers
 * for docs/configuration.md. Usage: npx tsx scripts/measureConfigWrite.ts [N ...]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { HubConfiguration } from '../src/config/model.js';
import { serializeConfiguration } from '../src/config/xmlFile.js';
import { startHub } from '../src/createHub.js';
import { createLogger } from '../src/logger.js';
import { hubOptions } from '../src/settings.js';

const TURNS = 15;
const open = () => ({
  stateObjects: { defaultAuthorization: 'Allow' as const, rules: [] },
  messages: { defaultAuthorization: 'Allow' as const, rules: [] },
  groups: { defaultAuthorization: 'Allow' as const, rules: [] },
});

function configuration(n: number): HubConfiguration {
  const credential = (name: string, accessKey: string, management: boolean) => ({
    name,
    accessKey,
    enable: true,
    enableControlHub: management,
    enableManagementAPI: management,
    enableDeveloperAccess: false,
    authorizations: open(),
  });
  return {
    listenUris: ['http://+:8088/'],
    recoveryOptions: {
      restartAfterFailure: true,
      numberOfRetry: 3,
      resetCounterAfterMinutes: 15,
      restartPackageAfterSeconds: 30,
    },
    credentials: [
      credential('Admin', 'admin-key-0001', true),
      ...Array.from({ length: n - 1 }, (_, i) => credential(`Device${i}`, `device-key-${i}-0001`, false)),
    ],
    sentinels: [
      {
        name: 'S1',
        credential: 'Device0',
        packages: [{ name: 'P1', enable: true, autoStart: true, settings: [], imports: [], groups: ['G'] }],
      },
    ],
    settingsGroups: [],
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function measure(n: number) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hub-measure-'));
  const options = hubOptions({
    dataDir,
    host: '127.0.0.1',
    port: 0,
    logLevel: process.env.LOG ?? 'silent',
    authFailureDelayMs: 0,
  });
  fs.writeFileSync(options.configPath, serializeConfiguration(configuration(n)));
  const hub = await startHub(options, createLogger(options.logLevel));
  const url = `${hub.url}/rest/management/credentials?SentinelName=Management&PackageName=Measure&AccessKey=admin-key-0001`;
  const wall: number[] = [];
  const gaps: number[] = [];
  const histogramMax: number[] = [];
  for (let turn = 0; turn < TURNS + 2; turn++) {
    let last = performance.now();
    let gap = 0;
    const probe = setInterval(() => {
      const now = performance.now();
      gap = Math.max(gap, now - last - 1);
      last = now;
    }, 1);
    const histogram = monitorEventLoopDelay({ resolution: 1 });
    histogram.enable();
    await new Promise((resolve) => setTimeout(resolve, 20));
    gap = 0;
    histogram.reset();
    const started = performance.now();
    const reply = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ Name: `Device${turn % Math.max(1, n - 1)}`, AccessKey: `rotated-key-${turn}-0001` }),
    });
    await reply.text();
    const elapsed = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 5));
    histogram.disable();
    clearInterval(probe);
    if (reply.status !== 200) throw new Error(`write failed: ${reply.status}`);
    if (turn < 2) continue; // warm-up
    wall.push(elapsed);
    gaps.push(gap);
    histogramMax.push(histogram.max / 1e6);
  }
  await hub.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
  return {
    n,
    wallMedianMs: median(wall),
    wallMaxMs: Math.max(...wall),
    blockMedianMs: median(gaps),
    blockMaxMs: Math.max(...gaps),
    loopDelayMaxMs: Math.max(...histogramMax),
  };
}

const sizes = process.argv
  .slice(2)
  .map(Number)
  .filter((n) => n > 0);
for (const n of sizes.length ? sizes : [10, 1500]) {
  const r = await measure(n);
  console.log(
    `${String(r.n).padStart(5)} credentials: write ${r.wallMedianMs.toFixed(1)} ms median (max ${r.wallMaxMs.toFixed(1)}), ` +
      `event-loop block ${r.blockMedianMs.toFixed(1)} ms median (max ${r.blockMaxMs.toFixed(1)}; monitorEventLoopDelay max ${r.loopDelayMaxMs.toFixed(1)})`,
  );
}
