/**
 * Measures how soon hub processes serve again after PostgreSQL restarts, from a process of its own.
 *
 * The chaos test's own process drives 1,000 pollers: after a crash of PostgreSQL their retries keep its
 * event loop busy for seconds at a time on a 2-core machine, so a probe run there measured its own
 * backlog (a /ready answered by the hub in 1 ms, timed out at 5 s in the test). A load balancer's health
 * check is a separate, small client: so is this one. It runs as a child process (`startRecoveryProbe`),
 * waits for PostgreSQL to accept connections (a connection and `select 1`, every 10 ms), then asks each
 * hub, every 10 ms, for /ready and a push on a fresh connection, and reports when each served again.
 */
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterFile } from './afterFile.js';

export interface RecoveryRequest {
  /** Each hub's base URL. */
  hubs: string[];
  /** A URL of the PostgreSQL cluster that restarts. */
  postgresUrl: string;
  /** Give up on a hub after this long (ms from PostgreSQL accepting connections). */
  probeMs: number;
  /** Who pushes the probe's StateObject `Probe<i>`. */
  identity: Record<string, string>;
  /** The first value pushed (values increase across probes). */
  firstValue: number;
}

export interface RecoveryReport {
  /** When PostgreSQL accepted connections again (epoch ms). */
  accepting: number;
  /** Per hub: ms from `accepting` until it answered /ready 200 and committed a push; null if not within probeMs. */
  servedAfter: (number | null)[];
  /** Per hub: what its last attempt got (for a hub that did not serve again). */
  lastAttempt: string[];
  /** The last value pushed. */
  lastValue: number;
}

export interface RecoveryProbe {
  /** Call right after stopping PostgreSQL: resolves once every hub served again or gave up. */
  recover(request: RecoveryRequest): Promise<RecoveryReport>;
  close(): void;
}

/** The status of a GET on a fresh connection (0 when it failed or took longer than `timeoutMs`). */
function statusOf(url: string, timeoutMs: number): Promise<number> {
  return new Promise((resolve) => {
    const request = http.get(url, { agent: false, timeout: timeoutMs }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
      response.on('error', () => resolve(0));
    });
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', () => resolve(0));
  });
}

async function acceptingAgain(postgresUrl: string): Promise<number> {
  for (;;) {
    const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 1_000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('select 1');
      return Date.now();
    } catch {
      await sleep(10);
    } finally {
      await client.end().catch(() => {});
    }
  }
}

async function recover(request: RecoveryRequest): Promise<RecoveryReport> {
  const accepting = await acceptingAgain(request.postgresUrl);
  let value = request.firstValue;
  const lastAttempt = request.hubs.map(() => 'none');
  const servedAgain = async (hub: string, i: number): Promise<number | null> => {
    while (Date.now() - accepting < request.probeMs) {
      const asked = Date.now();
      const ready = await statusOf(`${hub}/ready`, 5_000);
      lastAttempt[i] = `/ready ${ready || 'no answer'} after ${Date.now() - asked} ms`;
      if (ready === 200) {
        const query = new URLSearchParams({ ...request.identity, name: `Probe${i}`, value: String(value++) });
        const pushing = Date.now();
        const pushed = await statusOf(`${hub}/rest/platform/PushStateObject?${query}`, 5_000);
        lastAttempt[i] += `, push ${pushed || 'no answer'} after ${Date.now() - pushing} ms`;
        if (pushed === 204) return Date.now() - accepting;
      }
      await sleep(10);
    }
    return null;
  };
  const servedAfter = await Promise.all(request.hubs.map(servedAgain));
  return { accepting, servedAfter, lastAttempt, lastValue: value };
}

/** Starts the probe's process (`node --import tsx` on this file); it is killed when the test file ends. */
export function startRecoveryProbe(): RecoveryProbe {
  const file = fileURLToPath(import.meta.url);
  const child: ChildProcess = fork(file, ['--probe'], {
    cwd: path.resolve(path.dirname(file), '../..'),
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const close = () => void child.kill();
  afterFile(close);
  return {
    recover: (request) =>
      new Promise((resolve, reject) => {
        const exited = (code: number | null) => reject(new Error(`the recovery probe exited (${code})`));
        child.once('exit', exited);
        child.once('message', (report) => {
          child.off('exit', exited);
          resolve(report as RecoveryReport);
        });
        child.send(request);
      }),
    close,
  };
}

if (process.argv.includes('--probe') && process.send) {
  process.on('message', (request: RecoveryRequest) => {
    void recover(request).then((report) => process.send?.(report));
  });
}
