/**
 * A worker of bench/postgres.ts's idle-polls scenario (started with fork, driven over IPC): subscribes
 * `count` message subscriptions on one hub process, then long-polls each over its own raw keep-alive
 * socket bound to `localAddress` (a 127.0.0.x of its own: ephemeral ports are per source address), and
 * re-polls any that time out. It reports when every poll has been answered with a message, with the
 * moment (performance.timeOrigin + now, comparable across processes) of the last answer.
 * Commands: setup → ready, subscribe → subscribed, poll → polling (every request written), report →
 * received (also sent by itself once all have a message).
 */
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
let lastAt = 0;
let reported = false;
const now = () => performance.timeOrigin + performance.now();
const send = (m: object) => process.send?.(m);

function report(): void {
  reported = true;
  send({ type: 'received', received, renewed, lastAt, busy });
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

/** One socket polling subscription `id` until it is answered with a message. */
function pollOn(id: string): Promise<void> {
  const { hostname, port } = new URL(setup.url);
  const request = `GET /rest/consumer/GetMessages?${setup.identity}&subscriptionId=${id}&timeout=120000 HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`;
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port), localAddress: setup.localAddress });
    let buffer = '';
    socket.setEncoding('latin1');
    socket.on('connect', () => {
      socket.write(request);
      resolve();
    });
    socket.on('error', (error) => {
      reject(error);
      send({ type: 'error', message: `poll socket: ${error.message}` });
    });
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
      if (status !== '200') {
        send({ type: 'error', message: `poll answered ${status}: ${body}` });
        return;
      }
      if (body === '[]') {
        renewed++;
        socket.write(request);
        return;
      }
      received++;
      lastAt = now();
      socket.end();
      if (received === setup.count && !reported) report();
    });
  });
}

async function poll(): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (next < ids.length) await pollOn(ids[next++]);
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
      send({ type: 'polling', busy });
    } else if (m.type === 'report') report();
  };
  run().catch((error: unknown) => send({ type: 'error', message: (error as Error).message }));
});
process.on('disconnect', () => process.exit(0));
send({ type: 'started' });
