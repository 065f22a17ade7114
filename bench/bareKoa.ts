/**
 * Baselines, each started as its own process like the hub: a bare Koa app that answers 204 to
 * everything; with the argument `commit`, the same app that first stores each request's `name` and
 * `value` as the hub stores a pushed StateObject (bench/bareStore.ts: the same row and indexes, the same
 * group commit) and answers 204 once it is committed: the floor of a push on this stack, Koa plus the
 * commit and nothing else.
 */
import http from 'node:http';
import querystring from 'node:querystring';
import Koa from 'koa';
import { bareStore } from './bareStore.js';

const commit = process.argv[2] === 'commit';

const app = new Koa();
if (commit) {
  const store = bareStore();
  app.use(async (ctx) => {
    const query = querystring.parse(ctx.querystring);
    await store.push(String(query.name), JSON.stringify(query.value));
    ctx.status = 204;
  });
} else {
  app.use((ctx) => {
    ctx.status = 204;
  });
}
const handle = app.callback();
const server = http.createServer((req, res) => void handle(req, res));
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object') console.log(`bare koa listening on http://127.0.0.1:${address.port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
