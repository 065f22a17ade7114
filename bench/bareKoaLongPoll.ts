/**
 * The floor under the hub's wake-up and fan-out on its own stack and with its promises (issue 33): a
 * bare Koa app, one middleware, that holds long-polls and answers them only with committed writes, and
 * keeps each device's position on the server as the hub keeps a subscription's cursor.
 * `GET /sub/<channel>/<device>` answers at once when the channel has a message the device has not seen,
 * else waits for the next; the device's position moves once its answer is written, committed as the
 * hub's cursor is (bench/bareStore.ts). `GET /pub/<channel>?data=…` stores the value as the hub stores a
 * pushed StateObject, and once that is committed answers the channel's waiting polls and then the
 * publisher with 204. `GET /waiting` tells how many polls wait. Started as its own process by
 * bench/floor.ts, like the hub and the other baselines; bench/bareLongPoll.ts is the same without Koa
 * and without the store.
 */
import http from 'node:http';
import Koa from 'koa';
import { bareStore } from './bareStore.js';

interface Channel {
  /** Messages published so far: a device's position is the count it has seen. */
  count: number;
  last: string;
  waiting: (() => void)[];
}

const store = bareStore();
const channels = new Map<string, Channel>();
const positions = new Map<string, number>();
let waiting = 0;

const app = new Koa();
app.use(async (ctx) => {
  const [, role, id, device] = ctx.path.split('/');
  if (role === 'waiting') {
    ctx.body = String(waiting);
    return;
  }
  let channel = channels.get(id);
  if (!channel) channels.set(id, (channel = { count: 0, last: '[]', waiting: [] }));
  if (role === 'pub') {
    const data = String(ctx.query.data ?? '');
    await store.push(id, JSON.stringify(data));
    channel.count++;
    channel.last = JSON.stringify([{ Name: id, Value: data }]);
    const woken = channel.waiting;
    channel.waiting = [];
    waiting -= woken.length;
    for (const wake of woken) wake();
    ctx.status = 204;
    return;
  }
  if (role !== 'sub' || !device) {
    ctx.status = 404;
    return;
  }
  let position = positions.get(device);
  // First seen: waits for the next message, as a new subscription does.
  if (position === undefined) positions.set(device, (position = channel.count));
  const held = channel;
  if (position >= held.count) {
    const closed = new Promise<boolean>((resolve) => {
      const wake = () => resolve(true);
      held.waiting.push(wake);
      waiting++;
      ctx.req.once('close', () => {
        const at = held.waiting.indexOf(wake);
        if (at >= 0) {
          held.waiting.splice(at, 1);
          waiting--;
        }
        resolve(false);
      });
    });
    if (!(await closed)) return;
  }
  const seen = held.count;
  ctx.type = 'application/json';
  ctx.body = held.last;
  positions.set(device, seen);
  // Consumed once written: the position's commit follows the answer, as the hub's cursor settles.
  ctx.res.once('finish', () => void store.seen(device, seen));
});
const handle = app.callback();
const server = http.createServer((req, res) => void handle(req, res));
server.keepAliveTimeout = 65_000;
server.requestTimeout = 0;
server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => {
  const address = server.address();
  if (address && typeof address === 'object')
    console.log(`bare koa long-poll listening on http://127.0.0.1:${address.port}`);
});
process.on('SIGTERM', () => process.exit(0));
