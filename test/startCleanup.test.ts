/**
 * A hub whose start fails after its store opened closes what it had opened (createHub.ts): the store
 * and, on PostgreSQL, its connections and the cross-process feed. The failure is a real one and the last
 * step of a start: the port it is told to serve is already taken, so serving fails after everything else
 * started.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHub, tempDir } from './support/testHub.js';
import { postgresServer, testDatabase, testPool } from './support/postgres.js';
import type { TestDatabase } from './support/postgres.js';
import { until } from './support/until.js';

const server = await postgresServer();

/** A port another server holds while `run` runs: a hub told to serve it fails at its last step. */
async function withTakenPort<T>(run: (port: number) => Promise<T>): Promise<T> {
  const taker = net.createServer();
  await new Promise<void>((resolve) => taker.listen(0, '127.0.0.1', resolve));
  try {
    return await run((taker.address() as net.AddressInfo).port);
  } finally {
    await new Promise((resolve) => taker.close(resolve));
  }
}

describe('a start that fails after the store opened', () => {
  it('closes the SQLite database (checkpointed, its WAL file gone) and a second start succeeds', async () => {
    const dataDir = tempDir();
    await withTakenPort((port) => expect(startTestHub({ dataDir, options: { port } })).rejects.toThrow());
    expect(fs.existsSync(path.join(dataDir, 'hub.db'))).toBe(true);
    expect(fs.existsSync(path.join(dataDir, 'hub.db-wal'))).toBe(false);
    const hub = await startTestHub({ dataDir });
    await hub.stop();
  });

  describe.skipIf(!server.available)('on PostgreSQL', () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await testDatabase(server);
    });
    afterAll(async () => {
      await database?.drop();
    });

    it("closes the store's pool and the listener: no hub connection is left on the database", async () => {
      await withTakenPort((port) =>
        expect(startTestHub({ options: { databaseUrl: database.url, port } })).rejects.toThrow(),
      );
      const pool = testPool(database.url, 1);
      try {
        // A closed connection leaves pg_stat_activity when its backend exits, a moment after the client hung up.
        const hubConnections = async () =>
          (
            await pool.query<{ n: number }>(
              `select count(*) as n from pg_stat_activity where datname = current_database() and application_name like 'hub:%'`,
            )
          ).rows[0].n;
        await until(async () => (await hubConnections()) === 0);
      } finally {
        await pool.end();
      }
    });
  });
});
