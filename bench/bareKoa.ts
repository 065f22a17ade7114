/**
 * Baselines, each started as its own process like the hub: a bare Koa app that answers 204 to
 * everything; with the argument `commit`, the same app that first stores each request's `name` and
 * `value` as the hub stores a pushed StateObject (one upsert of a row of the same shape into a table with
 * the same indexes, better-sqlite3, WAL, synchronous=NORMAL, the upserts of one turn of the event loop
 * in one transaction) and answers
 * 204 once it is committed: the floor of a push on this stack, Koa plus the commit and nothing else.
 */
import Sqlite from 'better-sqlite3';
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import querystring from 'node:querystring';
import Koa from 'koa';

const commit = process.argv[2] === 'commit';

/** Pushes of this turn of the event loop, committed together once it ends (as the hub's group commit). */
function groupCommit(): (name: string, value: string) => Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hub-bench-koa-'));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  const db = new Sqlite(path.join(dir, 'bare.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`create table state_objects (
    sentinel_name text not null, package_name text not null, name text not null, type text not null,
    value text not null, metadatas text not null, last_update_ms integer not null, lifetime_s integer not null,
    expires_at_ms integer, expiry_announced integer not null default 0, seq integer not null,
    is_deleted integer not null default 0, primary key (sentinel_name, package_name, name));
    create index pending_expiry on state_objects (expires_at_ms) where expires_at_ms is not null and expiry_announced = 0;
    create index by_seq on state_objects (seq);
    create index by_name_seq on state_objects (name, seq);`);
  const upsert = db.prepare(
    `insert into state_objects values ('S1', 'P1', ?, '', ?, '{}', ?, 0, null, 0, ?, 0)
     on conflict (sentinel_name, package_name, name) do update set type = excluded.type, value = excluded.value,
     metadatas = excluded.metadatas, last_update_ms = excluded.last_update_ms, lifetime_s = excluded.lifetime_s,
     expires_at_ms = excluded.expires_at_ms, expiry_announced = 0, seq = excluded.seq, is_deleted = 0`,
  );
  let seq = 0;
  let queue: { name: string; value: string; done: () => void }[] = [];
  const flush = db.transaction((batch: typeof queue) => {
    for (const p of batch) upsert.run(p.name, p.value, Date.now(), ++seq);
  });
  return (name, value) =>
    new Promise((done) => {
      if (queue.length === 0)
        setImmediate(() => {
          const batch = queue;
          queue = [];
          flush(batch);
          for (const p of batch) p.done();
        });
      queue.push({ name, value, done });
    });
}

const app = new Koa();
if (commit) {
  const store = groupCommit();
  app.use(async (ctx) => {
    const query = querystring.parse(ctx.querystring);
    await store(String(query.name), JSON.stringify(query.value));
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
