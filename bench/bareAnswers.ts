/**
 * The floor under P4's send to All (issue 22): what a bare Node HTTP server, no hub, pays in CPU per
 * answer when it answers N held long-polls at once with one small JSON message each, and each client
 * closes its connection on its answer as bench/idlePolls.ts does (or, with BENCH_BARE_KEEP=1, keeps it).
 * The server, the clients and this driver are three processes (this file in three roles). Prints the
 * server's CPU (process.cpuUsage) per answer, the part spent in its loop of `res.end` alone, and the
 * time from the first answer to the last close. Run under the box lock, with the open-file limit raised:
 * `sh bench/withFileLimit.sh node --import tsx bench/bareAnswers.ts 2000`.
 */
import { fork } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { fileURLToPath } from 'node:url';

const KEEP = process.env.BENCH_BARE_KEEP === '1';
const send = (m: object) => process.send?.(m);
/** The answer P4's pollers get for the send to All, as the hub writes it. */
const BODY = JSON.stringify([
  {
    Sender: { ConnectionId: '6f1d2c1e-8a53-4f7e-b2a9-0c4d5e6f7a8b', Type: 1, FriendlyName: 'Sender' },
    Scope: { Scope: 'All', Args: [], SagaId: null },
    Key: 'Ping',
    Data: 1,
  },
]);

function server(): void {
  const held: http.ServerResponse[] = [];
  let ended = 0;
  let start: NodeJS.CpuUsage | undefined;
  let t0 = 0;
  const done = () => {
    if (++ended < held.length || !start) return;
    const cpu = process.cpuUsage(start);
    send({ type: 'done', ms: performance.now() - t0, cpuUs: cpu.user + cpu.system, n: held.length });
  };
  const http1 = http.createServer((_req, res) => {
    held.push(res);
    // Kept: the answer's 'finish' ends it; closed: the client's close after its answer does.
    if (KEEP) res.on('finish', done);
    else res.socket?.on('close', done);
  });
  http1.keepAliveTimeout = 120_000;
  http1.listen(0, '127.0.0.1', () => send({ type: 'port', port: (http1.address() as net.AddressInfo).port }));
  process.on('message', () => {
    t0 = performance.now();
    start = process.cpuUsage();
    for (const res of held) {
      res.statusCode = 200;
      res.setHeader('Vary', 'Origin');
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.setHeader('Content-Length', Buffer.byteLength(BODY));
      res.end(BODY);
    }
    const loop = process.cpuUsage(start);
    send({ type: 'written', cpuUs: loop.user + loop.system });
  });
}

function clients(port: number, n: number): void {
  let open = 0;
  const request = `GET /rest/consumer/GetMessages?subscriptionId=x&timeout=120000 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`;
  for (let i = 0; i < n; i++) {
    const socket = net.connect({ port, host: '127.0.0.1' });
    let buffer = '';
    socket.setEncoding('latin1');
    socket.on('connect', () => {
      socket.write(request);
      if (++open === n) send({ type: 'open' });
    });
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      const end = buffer.indexOf('\r\n\r\n');
      const length = Number(/content-length: *(\d+)/i.exec(buffer.slice(0, Math.max(end, 0)))?.[1] ?? NaN);
      if (end >= 0 && buffer.length >= end + 4 + length && !KEEP) socket.end();
    });
  }
}

async function driver(n: number): Promise<void> {
  const self = fileURLToPath(import.meta.url);
  const serverProcess = fork(self, ['server'], { execArgv: process.execArgv });
  const port = await new Promise<number>((resolve) =>
    serverProcess.once('message', (m: { port: number }) => resolve(m.port)),
  );
  const clientProcess = fork(self, ['clients', String(port), String(n)], { execArgv: process.execArgv });
  await new Promise((resolve) => clientProcess.once('message', resolve));
  await new Promise((resolve) => setTimeout(resolve, 1500));
  let loopUs = 0;
  const done = new Promise<{ ms: number; cpuUs: number }>((resolve) =>
    serverProcess.on('message', (m: { type: string; ms: number; cpuUs: number }) => {
      if (m.type === 'written') loopUs = m.cpuUs;
      if (m.type === 'done') resolve(m);
    }),
  );
  serverProcess.send({ type: 'go' });
  const { ms, cpuUs } = await done;
  const per = (us: number) => (us / n).toFixed(1);
  console.log(
    `bare Node, ${n} answers (clients ${KEEP ? 'keep' : 'close'} their connections): ${Math.round(ms)} ms; ` +
      `server CPU ${per(cpuUs)} µs per answer, of which the res.end loop ${per(loopUs)} µs`,
  );
  serverProcess.kill();
  clientProcess.kill();
}

const [role, a, b] = process.argv.slice(2);
if (role === 'server') server();
else if (role === 'clients') clients(Number(a), Number(b));
else await driver(Number(role ?? 2000));
