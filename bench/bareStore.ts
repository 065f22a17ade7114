/**
 * The store of the baselines that commit (bench/bareKoa.ts `commit`, bench/bareKoaLongPoll.ts): a
 * pushed value stored as the hub stores a StateObject (one upsert of a row of the same shape into a
 * table with the same indexes), and a device's position kept as the hub keeps a subscription's cursor
 * (one row per device); better-sqlite3 on a temporary file, WAL, synchronous=NORMAL, the writes of one
 * turn of the event loop in one transaction, each promise settled after its COMMIT (the hub's group commit).
 */
import Sqlite from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface BareStore {
  /** Stores `value` under `name`; resolves once committed. */
  push(name: string, value: string): Promise<void>;
  /** Stores that `device` has seen up to `seen`; resolves once committed. */
  seen(device: string, seen: number): Promise<void>;
}

type Write = { kind: 'push' | 'seen'; key: string; value: string | number; done: () => void };

export function bareStore(): BareStore {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hub-bench-bare-'));
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
    create index by_name_seq on state_objects (name, seq);
    create table cursors (device text primary key, seen integer not null);`);
  const upsert = db.prepare(
    `insert into state_objects values ('S1', 'P1', ?, '', ?, '{}', ?, 0, null, 0, ?, 0)
     on conflict (sentinel_name, package_name, name) do update set type = excluded.type, value = excluded.value,
     metadatas = excluded.metadatas, last_update_ms = excluded.last_update_ms, lifetime_s = excluded.lifetime_s,
     expires_at_ms = excluded.expires_at_ms, expiry_announced = 0, seq = excluded.seq, is_deleted = 0`,
  );
  const cursor = db.prepare(
    'insert into cursors values (?, ?) on conflict (device) do update set seen = max(seen, excluded.seen)',
  );
  let seq = 0;
  let queue: Write[] = [];
  const flush = db.transaction((batch: Write[]) => {
    for (const w of batch) {
      if (w.kind === 'push') upsert.run(w.key, w.value, Date.now(), ++seq);
      else cursor.run(w.key, w.value);
    }
  });
  const write = (kind: Write['kind'], key: string, value: string | number) =>
    new Promise<void>((done) => {
      if (queue.length === 0)
        setImmediate(() => {
          const batch = queue;
          queue = [];
          flush(batch);
          for (const w of batch) w.done();
        });
      queue.push({ kind, key, value, done });
    });
  return {
    push: (name, value) => write('push', name, value),
    seen: (device, seen) => write('seen', device, seen),
  };
}
