/**
 * The failed-authentication throttle counted across hub processes on one PostgreSQL database (issue 22):
 * guesses spread over processes meet the same delays and the same limit as guesses sent to one. Each
 * client address here is a loopback address of its own (127.0.0.x), so the tests do not share counts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthFailureThrottle } from '../src/hub/access/authFailureThrottle.js';
import { migratePostgres } from '../src/store/postgres/connections/migrate.js';
import { openPostgres } from '../src/store/postgres/connections/pool.js';
import { PostgresAuthFailureStore } from '../src/store/postgres/ports/authFailures.js';
import { pkg, startTestHub } from './support/testHub.js';
import type { TestHub } from './support/testHub.js';
import { firmwareRequest, RawConnection } from './support/rawHttp.js';
import { postgresServer, testDatabase, testPool } from './support/postgres.js';
import type { TestDatabase } from './support/postgres.js';
import { until } from './support/until.js';

const server = await postgresServer();
const S1P1 = pkg('S1', 'P1');
const WRONG = { ...S1P1, AccessKey: 'wrong' };
const limits = { baseMs: 100, stepMs: 200, maxMs: 10_000, limit: 3 };

describe.skipIf(!server.available)('failed authentications counted across processes', () => {
  let database: TestDatabase;
  let a: TestHub;
  let b: TestHub;

  beforeAll(async () => {
    database = await testDatabase(server);
    const { db } = openPostgres({
      url: database.url,
      role: 'migrate',
      sync: 'full',
      lockWaitMs: 10_000,
      log: { warn: () => {} },
    });
    await migratePostgres(db).finally(() => db.destroy());
    const options = {
      databaseUrl: database.url,
      authFailureDelayMs: 10,
      authFailureStepMs: 10,
      authFailureMaxDelayMs: 50,
      authFailureLimit: 3,
    };
    [a, b] = await Promise.all([0, 1].map(() => startTestHub({ options })));
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await database?.drop();
  });

  it("failures through one process raise the delay the other gives, and the other's count", async () => {
    // Two processes' throttles, each with a pool of its own on the same database.
    const pools = [testPool(database.url), testPool(database.url)];
    try {
      const [one, two] = pools.map((p) => new AuthFailureThrottle(limits, new PostgresAuthFailureStore(p)));
      expect(await one.failed('10.1.0.1')).toBe(100);
      expect(await one.failed('10.1.0.1')).toBe(300);
      expect(two.blockedFor('10.1.0.1')).toBe(0);
      // The third failure of the address, its first through `two`: the delay of a third, and the limit.
      expect(await two.failed('10.1.0.1')).toBe(500);
      expect(two.blockedFor('10.1.0.1')).toBeGreaterThan(0);
      // Another address starts from the base.
      expect(await two.failed('10.1.0.2')).toBe(100);
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });

  const answer = async (h: TestHub, address: string, identity: typeof S1P1) => {
    const c = await RawConnection.open(h.port, address);
    try {
      c.write(firmwareRequest('GET', '/rest/platform/CheckAccess', identity));
      return (await c.answer()).status;
    } finally {
      c.close();
    }
  };

  it('an address that reaches the limit through A and B is refused by both, even with the right key', async () => {
    const address = '127.0.0.21';
    expect(await answer(a, address, S1P1)).toBe(200);
    expect(await answer(a, address, WRONG)).toBe(403);
    expect(await answer(a, address, WRONG)).toBe(403);
    expect(await answer(b, address, S1P1)).toBe(200); // two failures so far: under the limit
    // The third failure, through B: B counts three (in the database) and refuses at once.
    expect(await answer(b, address, WRONG)).toBe(403);
    expect(await answer(b, address, S1P1)).toBe(429);
    // A never saw the third failure: B's announcement blocks the address there too.
    await until(async () => (await answer(a, address, S1P1)) === 429);
    // Another address is not affected.
    expect(await answer(a, '127.0.0.22', S1P1)).toBe(200);
    expect(await answer(b, '127.0.0.22', S1P1)).toBe(200);
  });
});
