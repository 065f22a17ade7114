/**
 * N real hub processes on one PostgreSQL database behind a real nginx (issue 22): each process is
 * `node --import tsx src/cli.ts` with its own data directory (the same configuration file), its own
 * port and HUB_DATABASE_URL; nginx runs deploy/nginx.conf (the file docs/operations.md shows) with
 * only its listen port and upstream lines replaced, round-robin, no affinity. A process can be killed
 * with SIGKILL and restarted on the same port.
 */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterFile } from './afterFile.js';
import { stablePort } from './ports.js';
import { tempDir, writeConfiguration } from './testHub.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const NGINX_CONF = path.join(ROOT, 'deploy/nginx.conf');
const NGINX = process.env.HUB_TEST_NGINX ?? '/usr/sbin/nginx';

/** Whether nginx is installed; without it the suites skip and say so (fail with HUB_TEST_POSTGRES=required, as in CI). */
export function nginxAvailable(): boolean {
  if (fs.existsSync(NGINX)) return true;
  const reason = `no nginx at ${NGINX} (HUB_TEST_NGINX)`;
  if (process.env.HUB_TEST_POSTGRES === 'required') throw new Error(`${reason}, and HUB_TEST_POSTGRES=required`);
  console.warn(`[nginx] ${reason}: skipping the suites of this file`);
  return false;
}

/** deploy/nginx.conf with `listen` on `port` and one upstream `server` line per port of `upstreams`. */
function nginxConfig(port: number, upstreams: number[]): string {
  const text = fs.readFileSync(NGINX_CONF, 'utf8');
  const serverLine = /^(\s*)server 127\.0\.0\.1:\d+ (.*);.*$/m;
  const match = serverLine.exec(text);
  if (!match || !/listen 127\.0\.0\.1:\d+;/.test(text))
    throw new Error(`${NGINX_CONF} no longer has the lines nginxHubs replaces`);
  const servers = upstreams.map((p) => `${match[1]}server 127.0.0.1:${p} ${match[2]};`).join('\n');
  return text
    .replace(/^\s*server 127\.0\.0\.1:\d+ .*\n/gm, '')
    .replace(/(upstream hub \{\n(?:\s*#.*\n)*)/, `$1${servers}\n`)
    .replace(/listen 127\.0\.0\.1:\d+;/, `listen 127.0.0.1:${port};`);
}

interface HubProcess {
  port: number;
  url: string;
  dataDir: string;
  process: ChildProcess | undefined;
  /** What the process wrote (stdout and stderr), across restarts. */
  output: string;
  /** Exits nobody asked for (a process must survive PostgreSQL restarts and killed connections). */
  unexpectedExits: string[];
  killing: boolean;
}

export interface NginxHubs {
  /** nginx's address: every request of a test goes there. */
  url: string;
  hubs: HubProcess[];
  /** SIGKILL of process `i`; resolves once it exited. */
  kill(i: number): Promise<void>;
  /** Starts process `i` again on its port; resolves once it listens. */
  restart(i: number): Promise<void>;
  stop(): Promise<void>;
}

/** How long a process may take to listen. */
const START_MS = 180_000;

function startHubProcess(hub: HubProcess, env: Record<string, string>): Promise<void> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      HUB_DATA_DIR: hub.dataDir,
      HUB_PORT: String(hub.port),
      HUB_HOST: '127.0.0.1',
      HUB_LOG_LEVEL: 'warn',
      HUB_AUTH_FAILURE_DELAY_MS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  hub.process = proc;
  hub.killing = false;
  return new Promise((resolve, reject) => {
    let started = false;
    // Killed if it does not listen in time (on a starved machine tsx takes minutes): left running, it
    // would take the port from the next attempt.
    const timer = setTimeout(() => {
      hub.killing = true;
      void kill9(proc).then(() => reject(new Error(`hub on ${hub.port} did not start: ${hub.output.slice(-2000)}`)));
    }, START_MS);
    const take = (chunk: Buffer) => {
      // HUB_TEST_HUB_LOG_DIR keeps each process's whole output (hub-<port>.log), to read after a failed run.
      if (process.env.HUB_TEST_HUB_LOG_DIR) {
        fs.mkdirSync(process.env.HUB_TEST_HUB_LOG_DIR, { recursive: true });
        fs.appendFileSync(path.join(process.env.HUB_TEST_HUB_LOG_DIR, `hub-${hub.port}.log`), chunk);
      }
      hub.output += chunk.toString();
      if (hub.output.length > 1_000_000) hub.output = hub.output.slice(-500_000);
      if (!started && hub.output.includes(`hub listening on http://127.0.0.1:${hub.port}`)) {
        started = true;
        clearTimeout(timer);
        resolve();
      }
    };
    proc.stdout?.on('data', take);
    proc.stderr?.on('data', take);
    proc.on('exit', (code, signal) => {
      if (hub.process === proc) hub.process = undefined;
      if (!hub.killing)
        hub.unexpectedExits.push(`${new Date().toISOString()} ${code ?? signal}: ${hub.output.slice(-1000)}`);
      if (!started) {
        clearTimeout(timer);
        reject(new Error(`hub on ${hub.port} exited (${code ?? signal}) before listening: ${hub.output.slice(-2000)}`));
      }
    });
  });
}

function kill9(proc: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    proc.once('exit', () => resolve());
    proc.kill(signal);
  });
}

/** Starts `count` hub processes on `databaseUrl` (the first alone: it migrates) and nginx in front. */
export async function startNginxHubs(
  databaseUrl: string,
  count = 3,
  env: Record<string, string> = {},
): Promise<NginxHubs> {
  const hubs: HubProcess[] = [];
  for (let i = 0; i < count; i++) {
    const dataDir = tempDir();
    writeConfiguration(path.join(dataDir, 'hub.config.xml'));
    hubs.push({
      port: await stablePort(),
      url: '',
      dataDir,
      process: undefined,
      output: '',
      unexpectedExits: [],
      killing: false,
    });
    hubs[i].url = `http://127.0.0.1:${hubs[i].port}`;
  }
  const hubEnv = { HUB_DATABASE_URL: databaseUrl, ...env };
  let nginx: ChildProcess | undefined;
  const prefix = tempDir();
  try {
    // The first creates the tables; the others start together and find them there.
    await startHubProcess(hubs[0], hubEnv);
    await Promise.all(hubs.slice(1).map((hub) => startHubProcess(hub, hubEnv)));
    for (const dir of ['tmp', 'tmp/body', 'tmp/proxy', 'tmp/fastcgi', 'tmp/uwsgi', 'tmp/scgi'])
      fs.mkdirSync(path.join(prefix, dir), { recursive: true });
    fs.chmodSync(prefix, 0o755);
    for (const dir of ['tmp', 'tmp/body', 'tmp/proxy']) fs.chmodSync(path.join(prefix, dir), 0o777); // workers run as nobody under root
    const port = await stablePort();
    const conf = path.join(prefix, 'nginx.conf');
    fs.writeFileSync(
      conf,
      nginxConfig(
        port,
        hubs.map((h) => h.port),
      ),
    );
    const check = spawnSync(NGINX, ['-t', '-q', '-p', prefix, '-c', conf, '-e', 'stderr'], { encoding: 'utf8' });
    if (check.status !== 0) throw new Error(`nginx -t: ${check.stderr}`);
    nginx = spawn(NGINX, ['-p', prefix, '-c', conf, '-e', 'stderr', '-g', 'daemon off;'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let nginxOutput = '';
    nginx.stderr?.on('data', (c: Buffer) => (nginxOutput = (nginxOutput + c.toString()).slice(-20_000)));
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${url}/health`)).status < 500) break;
      } catch {
        // not listening yet
      }
      if (i > 200) throw new Error(`nginx did not answer: ${nginxOutput}`);
      await sleep(25);
    }
    const stopped = nginx;
    const stop = async () => {
      for (const h of hubs) h.killing = true;
      await Promise.all(hubs.map((h) => kill9(h.process)));
      await kill9(stopped, 'SIGTERM'); // nginx's fast shutdown: its workers go too (SIGKILL would orphan them)
      for (const h of hubs) fs.rmSync(h.dataDir, { recursive: true, force: true });
      fs.rmSync(prefix, { recursive: true, force: true });
    };
    afterFile(stop);
    return {
      url,
      hubs,
      kill: (i) => {
        hubs[i].killing = true;
        return kill9(hubs[i].process);
      },
      restart: (i) => startHubProcess(hubs[i], hubEnv),
      stop,
    };
  } catch (error) {
    await Promise.all(hubs.map((h) => kill9(h.process)));
    await kill9(nginx, 'SIGTERM');
    throw error;
  }
}
