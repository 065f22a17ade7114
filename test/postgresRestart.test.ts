/**
 * PostgreSQL itself crashing and coming back (issue 22), on a throwaway cluster of this file's own
 * (test/support/postgres.ts; never the shared server): `pg_ctl restart -m immediate` is a crash (no
 * shutdown checkpoint, recovery from the WAL at start). A process's pools and its listener must come
 * back by themselves, without the process failing, and a write acknowledged with HUB_SYNC=full before
 * the crash must be there after it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, openPostgres } from '../src/store/postgres/connections/pool.js';
import type { PostgresLog } from '../src/store/postgres/connections/pool.js';
import { migratePostgres } from '../src/store/postgres/connections/migrate.js';
import { appendMessages } from '../src/store/postgres/connections/logs.js';
import { notifyCommitted, PostgresListener } from '../src/store/postgres/feed/listener.js';
import { TailReader } from '../src/store/postgres/feed/tailReader.js';
import type { SentMessageKey } from '../src/store/postgres/feed/tailReader.js';
import { messageRow, throwawayCluster, throwawayClusterPossible } from './support/postgres.js';
import type { ThrowawayCluster } from './support/postgres.js';
import { until } from './support/until.js';

const possible = throwawayClusterPossible();

describe.skipIf(!possible)('PostgreSQL crashing and restarting under a running process', () => {
  let cluster: ThrowawayCluster;
  beforeAll(async () => {
    cluster = await throwawayCluster();
  }, 120_000);
  afterAll(async () => {
    await cluster?.destroy();
  });

  it('pools and the listener come back by themselves, the process goes on, and an acknowledged write (HUB_SYNC=full) survives', async () => {
    const warnings: { object: object; message: string }[] = [];
    const log: PostgresLog = { warn: (object, message) => warnings.push({ object, message }) };
    const url = cluster.url;
    const { db } = openPostgres({ url, role: 'migrate', sync: 'full', lockWaitMs: 10_000, log });
    await migratePostgres(db).finally(() => db.destroy());

    const writer = createPool({ url, role: 'writer', sync: 'full', lockWaitMs: 10_000, log, max: 2 });
    const tailPool = createPool({ url, role: 'tail', sync: 'full', lockWaitMs: 10_000, log, max: 2 });
    const seen: SentMessageKey[] = [];
    const tail = new TailReader({
      db: tailPool,
      log,
      fallbackMs: 3_600_000,
      handlers: { stateObjects: () => {}, messages: (rows) => seen.push(...rows), packageLogs: () => {} },
    });
    await tail.start();
    const listener = new PostgresListener({
      url,
      sync: 'full',
      lockWaitMs: 10_000,
      log,
      firstBackoffMs: 50,
      maxBackoffMs: 500,
      channels: { hub: () => void tail.hint() },
      onReady: () => void tail.hint(),
    });
    await listener.start();
    try {
      const [before] = await appendMessages(writer, [messageRow('acknowledged before the crash')]);
      await notifyCommitted(writer);
      await until(() => seen.length === 1);

      await cluster.restart('immediate');

      // The pool's old connections are dead: an operation that meets one fails alone, the next gets a new one.
      await until(() =>
        writer.query('select 1').then(
          () => true,
          () => false,
        ),
      );
      const { rows } = await writer.query('select id, data from messages order by id');
      expect(rows).toEqual([{ id: before, data: 'acknowledged before the crash' }]);
      await until(() => listener.connected && listener.reconnects === 1);

      const [after] = await appendMessages(writer, [messageRow('after the restart')]);
      await notifyCommitted(writer);
      await until(() => seen.length === 2);
      expect(seen.map((m) => m.id)).toEqual([before, after]);
      expect(warnings.some((w) => /connection lost/.test(w.message))).toBe(true);
    } finally {
      await listener.stop();
      await tail.stop();
      await writer.end();
      await tailPool.end();
    }
  });
});
