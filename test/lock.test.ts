/**
 * Someone holds the database's write lock from another process (the sqlite3 shell, a backup script):
 * the hub keeps serving, group-committed writes wait for the lock, and a lock held too long gives a
 * clear 503 instead of a stalled hub.
 */
import Sqlite from 'better-sqlite3';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { consumer, get, hubsStoppedAfterEach, pkg } from './support/testHub.js';

const hub = hubsStoppedAfterEach();

/** A second connection to the hub's file, as `sqlite3 data/hub.db` would open, holding the write lock. */
function shellHoldingWriteLock(dataDir: string): Sqlite.Database {
  const shell = new Sqlite(path.join(dataDir, 'hub.db'));
  shell.exec('BEGIN IMMEDIATE');
  return shell;
}

describe('a write lock held by another process', () => {
  it('keeps the hub answering while a push waits, and stores the push once the lock is released', async () => {
    const h = await hub();
    const shell = shellHoldingWriteLock(h.dataDir);
    try {
      const pushing = get(h, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'Locked', value: 7 });
      await sleep(200);
      // A hub blocked inside SQLite's busy wait could not answer this before the push gives up.
      const first = await Promise.race([
        pushing.then(() => 'push'),
        fetch(`${h.url}/health`).then((r) => (r.status === 200 ? 'health' : `health ${r.status}`)),
      ]);
      expect(first).toBe('health');
      shell.exec('COMMIT');
      expect((await pushing).status).toBe(204);
    } finally {
      shell.close();
    }
    const objects = (await get(h, 'consumer/RequestStateObjects', consumer(), { name: 'Locked' })).json<
      { Value: unknown }[]
    >();
    expect(objects.map((o) => o.Value)).toEqual([7]);
  });

  it('answers 503 with Retry-After when the lock outlasts the wait, and works again after', async () => {
    const h = await hub({ options: { lockWaitMs: 300 } });
    const shell = shellHoldingWriteLock(h.dataDir);
    try {
      const push = await get(h, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'Late', value: 1 });
      expect(push.status).toBe(503);
      expect(push.headers.get('retry-after')).toBe('1');
      expect(push.json<{ Message: string }>().Message).toMatch(/locked by another process/);
      // Writes outside the group commit (here: a new subscription) answer the same way.
      const subscribe = await get(h, 'consumer/SubscribeToStateObjects', consumer());
      expect(subscribe.status).toBe(503);
    } finally {
      shell.exec('ROLLBACK');
      shell.close();
    }
    expect((await get(h, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'Late', value: 2 })).status).toBe(204);
    const objects = (await get(h, 'consumer/RequestStateObjects', consumer(), { name: 'Late' })).json<
      { Value: unknown }[]
    >();
    expect(objects.map((o) => o.Value)).toEqual([2]);
  });

  it("makes WriteLog, a first-time caller's SendMessage and a new caller's subscription wait for the lock like a push", async () => {
    const h = await hub();
    const shell = shellHoldingWriteLock(h.dataDir);
    let settled = 0;
    const count = <T>(p: Promise<T>) => p.finally(() => settled++);
    const pending = [
      count(get(h, 'platform/WriteLog', pkg('S1', 'P1'), { message: 'while locked' })),
      count(get(h, 'consumer/SendMessage', consumer('NeverSeenBefore'), { scope: 'All', key: 'Hello' })),
      count(get(h, 'consumer/SubscribeToMessage', consumer('AlsoNew'))),
    ];
    try {
      // Well past the 50 ms the database itself waits: nothing has given up.
      await sleep(400);
      expect(settled).toBe(0);
      expect((await fetch(`${h.url}/health`)).status).toBe(200);
    } finally {
      shell.exec('COMMIT');
      shell.close();
    }
    expect((await Promise.all(pending)).map((r) => r.status)).toEqual([204, 204, 200]);
  });

  it('answers reads while a write through Kysely waits for the lock', async () => {
    const h = await hub();
    expect((await get(h, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'Readable', value: 5 })).status).toBe(
      204,
    );
    const shell = shellHoldingWriteLock(h.dataDir);
    try {
      // A caller never seen is recorded through Kysely: that write waits for the lock…
      const waiting = get(h, 'consumer/SendMessage', consumer('FirstTime'), { scope: 'All', key: 'K' }).then(
        () => 'write',
      );
      await sleep(150);
      // …and a read through the same connection does not wait behind it.
      const read = get(h, 'consumer/RequestStateObjects', consumer(), { name: 'Readable' }).then((r) =>
        r.status === 200 ? 'read' : `read ${r.status}`,
      );
      expect(await Promise.race([waiting, read])).toBe('read');
      shell.exec('COMMIT');
      expect(await waiting).toBe('write');
    } finally {
      if (shell.inTransaction) shell.exec('ROLLBACK');
      shell.close();
    }
  });
});
