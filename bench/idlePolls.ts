/**
 * A worker of bench/postgres.ts's idle-polls scenario (started with fork, driven over IPC): subscribes
 * `count` message subscriptions on one hub process, then long-polls each over its own raw keep-alive
 * socket bound to `localAddress` (a 127.0.0.x of its own) and a local port it chooses (`localPort`
 * below), and re-polls any that time out (connections open at BENCH_IDLE_OPEN_PER_SECOND per worker,
 * 1,000 by default). It reports when every poll has been answered with a message, with the moment
 * (performance.timeOrigin + now, comparable across processes) of the last answer.
 * Commands: setup → ready, subscribe → subscribed, poll → polling (every request written), report →
 * received (also sent by itself once all have a message).
 */
import fs from 'node:fs';
import net from 'node:net';
import { Pool } from 'undici';

/** Kept free of the other bench modules (and so of src/): seven of these start at once on a busy box. */
let pool: Pool | undefined;
async function httpGet(url: string): Promise<{ status: number; body: string }> {
  const { origin, pathname, search } = new URL(url);
  pool ??= new Pool(origin, { connections: 32 });
  const response = await pool.request({ method: 'GET', path: pathname + search });
  return { status: response.statusCode, body: await response.body.text() };
}

interface Setup {
  url: string;
  count: number;
  localAddress: string;
  identity: string;
}

let setup: Setup;
let ids: string[] = [];
let received = 0;
let renewed = 0;
let busy = 0;
let retried = 0;
let lastAt = 0;
let reported = false;
const now = () => performance.timeOrigin + performance.now();
const send = (m: object) => process.send?.(m);

function report(): void {
  reported = true;
  send({ type: 'received', received, renewed, lastAt, busy, retried });
}

async function subscribe(): Promise<void> {
  ids = new Array<string>(setup.count);
  let next = 0;
  const ticker = setInterval(() => {
    if (process.env.BENCH_VERBOSE) console.error(`  ${setup.localAddress}: ${next} subscribing, ${busy} answered 503`);
  }, 10_000);
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < setup.count) {
        const i = next++;
        for (;;) {
          const { status, body } = await httpGet(`${setup.url}/rest/consumer/SubscribeToMessage?${setup.identity}`);
          if (status === 200) {
            ids[i] = JSON.parse(body) as string;
            break;
          }
          // 503: the credential's subscription count is taken under a lock all processes share; a device retries.
          if (status !== 503) throw new Error(`subscribe answered ${status}: ${body}`);
          busy++;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    }),
  );
  clearInterval(ticker);
}

/**
 * The local ports the polls' sockets bind, given rather than left to the kernel: bound with port 0,
 * a socket has Linux search its ephemeral range for a free port, which costs more the more of the
 * range is taken (measured here, 2026-11-26: ~40 µs of system time per connect up to ~7,000
 * connections from one address, then ~2.2 ms each; an explicit port stays at ~40 µs), and at P4's
 * 14,286 connections a worker then spends its CPU in the kernel instead of placing polls. The ports
 * run from 1024 up to the ephemeral range (which the hubs' own connections use), wrapping around; one
 * in use (something listening on every address, a socket of this worker closed in TIME_WAIT) is
 * skipped.
 */
const FIRST_PORT = 1024;
const LAST_PORT = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'latin1').split(/\s+/)[0]) - 1;
let nextPort = FIRST_PORT;
function localPort(): number {
  const port = nextPort;
  nextPort = port >= LAST_PORT ? FIRST_PORT : port + 1;
  return port;
}

/**
 * Subscription `id` long-polled over its own socket until a message answers it. As a device does, a
 * poll refused with 408 (its headers not read in time: the hub was busy accepting thousands of
 * connections) or whose connection closed unanswered connects again after 100 ms; each such retry is
 * counted. Resolves once the first connection is up.
 */
function pollOn(id: string): Promise<void> {
  const { hostname, port } = new URL(setup.url);
  const request = `GET /rest/consumer/GetMessages?${setup.identity}&subscriptionId=${id}&timeout=120000 HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`;
  return new Promise((resolve) => {
    const connect = () => {
      const socket = net.connect({
        host: hostname,
        port: Number(port),
        localAddress: setup.localAddress,
        localPort: localPort(),
      });
      let buffer = '';
      let done = false;
      let connected = false;
      const again = () => {
        if (done) return;
        done = true;
        retried++;
        socket.destroy();
        setTimeout(connect, 100);
      };
      socket.setEncoding('latin1');
      socket.on('connect', () => {
        connected = true;
        socket.write(request);
        resolve();
      });
      socket.on('error', (error: NodeJS.ErrnoException) => {
        if (connected || error.code !== 'EADDRINUSE') return again();
        // That local port is taken: the next one, at once (not a retry of the poll).
        done = true;
        socket.destroy();
        connect();
      });
      socket.on('close', again);
      socket.on('data', (chunk: string) => {
        buffer += chunk;
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/content-length: *(\d+)/i.exec(buffer.slice(0, end))?.[1] ?? NaN);
        if (Number.isNaN(length) || buffer.length < end + 4 + length) return;
        const status = buffer.slice(9, 12);
        const body = buffer.slice(end + 4, end + 4 + length);
        buffer = buffer.slice(end + 4 + length);
        if (status === '503') {
          // The process's connections to PostgreSQL were all busy for HUB_LOCK_WAIT_MS: a device polls again.
          busy++;
          setTimeout(() => socket.write(request), 100);
          return;
        }
        if (status === '408') return again();
        if (status !== '200') {
          send({ type: 'error', message: `poll answered ${status}: ${body}` });
          return;
        }
        if (body === '[]') {
          renewed++;
          socket.write(request);
          return;
        }
        done = true;
        received++;
        lastAt = now();
        // The connection stays open, as a device's that polls again on it: closing it here would put
        // the teardown of every connection into the send's time (bench/bareAnswers.ts: ~2× per answer).
        if (received === setup.count && !reported) report();
      });
    };
    connect();
  });
}

/** New connections per second from this worker at most: a burst of thousands stalls the hub's accepts. */
const OPEN_PER_SECOND = Number(process.env.BENCH_IDLE_OPEN_PER_SECOND ?? 1000);

async function poll(): Promise<void> {
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (next < ids.length) {
        const i = next++;
        const due = started + (i * 1000) / OPEN_PER_SECOND - performance.now();
        if (due > 0) await new Promise((r) => setTimeout(r, due));
        await pollOn(ids[i]);
      }
    }),
  );
}

process.on('message', (m: { type: string } & Partial<Setup>) => {
  const run = async () => {
    if (m.type === 'setup') {
      setup = m as Setup;
      send({ type: 'ready' });
    } else if (m.type === 'subscribe') {
      await subscribe();
      send({ type: 'subscribed', busy });
    } else if (m.type === 'poll') {
      await poll();
      send({ type: 'polling', busy, retried });
    } else if (m.type === 'report') report();
  };
  run().catch((error: unknown) => send({ type: 'error', message: (error as Error).message }));
});
process.on('disconnect', () => process.exit(0));
send({ type: 'started' });
