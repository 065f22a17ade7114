/**
 * The floor under the hub's wake-up and fan-out (issue 33): a bare Node HTTP server, no Koa, no store,
 * that holds long-polls and answers them from memory. `GET /sub/<channel>` waits for the channel's next
 * message (or answers at once with one published since the `If-None-Match` it sends, as a device that
 * re-polls must not miss one); `GET /pub/<channel>?data=…` answers every waiting poll of the channel
 * with a small JSON array and the publisher with 204; `GET /waiting` tells how many polls wait. Started
 * as its own process by bench/floor.ts, like the hub and the other baselines.
 */
import http from 'node:http';

interface Channel {
  /** Messages published so far; the poll's `If-None-Match` is the count it has seen. */
  count: number;
  last: string;
  waiting: Set<http.ServerResponse>;
}

const channels = new Map<string, Channel>();
let waiting = 0;

function answer(res: http.ServerResponse, channel: Channel): void {
  res.writeHead(200, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(channel.last),
    ETag: String(channel.count),
  });
  res.end(channel.last);
}

const server = http.createServer((req, res) => {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  const path = query < 0 ? url : url.slice(0, query);
  const [, role, id] = path.split('/');
  if (role === 'waiting') {
    res.end(String(waiting));
    return;
  }
  let channel = channels.get(id);
  if (!channel) channels.set(id, (channel = { count: 0, last: '[]', waiting: new Set() }));
  if (role === 'sub') {
    const seen = Number(req.headers['if-none-match'] ?? channel.count);
    if (seen < channel.count) return answer(res, channel);
    const held = channel;
    held.waiting.add(res);
    waiting++;
    res.once('close', () => {
      if (held.waiting.delete(res)) waiting--;
    });
    return;
  }
  if (role === 'pub') {
    const data = new URLSearchParams(query < 0 ? '' : url.slice(query)).get('data') ?? '';
    channel.count++;
    channel.last = JSON.stringify([{ Name: id, Value: data }]);
    const answered = channel.waiting;
    channel.waiting = new Set();
    waiting -= answered.size;
    for (const each of answered) answer(each, channel);
    res.statusCode = 204;
    res.end();
    return;
  }
  res.statusCode = 404;
  res.end();
});
server.keepAliveTimeout = 65_000;
server.requestTimeout = 0;
server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => {
  const address = server.address();
  if (address && typeof address === 'object')
    console.log(`bare long-poll listening on http://127.0.0.1:${address.port}`);
});
process.on('SIGTERM', () => process.exit(0));
