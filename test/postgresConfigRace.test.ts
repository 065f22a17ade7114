/**
 * The PostgreSQL twin of configRace.test.ts, across two real hub processes on one database: management
 * writes through both processes race HTTP reloads and SIGHUPs on both. Every write answered 200 is
 * served at once by the process that answered it, is in the database's document, and is served by the
 * other process once it applied the change (docs/configuration.md, "On PostgreSQL").
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliProcess } from './support/hubCli.js';
import { killCliProcesses, startHubProcess } from './support/hubCli.js';
import type { Written } from './support/configRace.js';
import { checkAccess, raceWritesAndReloads } from './support/configRace.js';
import { admin, get, tempDir } from './support/testHub.js';
import type { TestDatabase } from './support/postgres.js';
import { postgresServer, testDatabase, testPool } from './support/postgres.js';

const server = await postgresServer();
const ROUNDS = Number(process.env.HUB_RACE_ROUNDS ?? 1);
const WRITERS = 3;
const WRITES_PER_WRITER = 6;

/** A hub process of its own data directory on `databaseUrl`, a refused key answered at once. */
const startProcess = (databaseUrl: string) =>
  startHubProcess(tempDir(), {
    HUB_LOG_LEVEL: 'warn',
    HUB_DATABASE_URL: databaseUrl,
    HUB_AUTH_FAILURE_STEP_MS: '0',
    HUB_AUTH_FAILURE_LIMIT: '1000000',
  });

describe.skipIf(!server.available)('management writes through two processes racing reloads and SIGHUPs', () => {
  let database: TestDatabase;
  const hubs: (CliProcess & { url: string })[] = [];

  beforeAll(async () => {
    database = await testDatabase(server);
    for (let i = 0; i < 2; i++) hubs.push(await startProcess(database.url));
  }, 240_000);
  afterAll(async () => {
    killCliProcesses();
    await database?.drop();
  });

  it('every acknowledged write is served at once by its process, kept in the database, and applied by the other', async () => {
    const acknowledged: Written[] = [];
    const refused: string[] = [];
    const notServed: string[] = [];
    const raced = hubs.map((h) => ({
      url: h.url,
      sighup: async () => {
        h.proc.kill('SIGHUP');
        await sleep(5);
      },
    }));
    for (let round = 0; round < ROUNDS; round++) {
      const outcome = await raceWritesAndReloads(raced, round, { writers: WRITERS, writes: WRITES_PER_WRITER });
      acknowledged.push(...outcome.acknowledged);
      refused.push(...outcome.refused);
      notServed.push(...outcome.notServed);
    }
    expect(refused.slice(0, 3)).toEqual([]);
    expect(notServed.slice(0, 3)).toEqual([]);
    expect(acknowledged).toHaveLength(ROUNDS * 2 * WRITERS * WRITES_PER_WRITER);

    const pool = testPool(database.url);
    const { text } = (await pool.query<{ text: string }>('select text from configuration_document')).rows[0];
    await pool.end();
    expect(acknowledged.filter((w) => !text.includes(`accessKey="${w.key}"`)).map((w) => w.name)).toEqual([]);

    // Each process applies the other's last change after its notification.
    for (const h of hubs) {
      const deadline = Date.now() + 30_000;
      const missingOn = async () => {
        const listed = new Set(
          (await get(h, 'management/credentials', admin)).json<{ Name: string }[]>().map((c) => c.Name),
        );
        return acknowledged.filter((w) => !listed.has(w.name)).map((w) => w.name);
      };
      let missing = await missingOn();
      while (missing.length > 0 && Date.now() < deadline) {
        await sleep(50);
        missing = await missingOn();
      }
      expect(missing.slice(0, 3), `${h.url} lists every acknowledged credential`).toEqual([]);
      const rejected: string[] = [];
      for (const w of acknowledged) if ((await checkAccess(h, w.key)) !== 200) rejected.push(w.name);
      expect(rejected.slice(0, 3)).toEqual([]);
    }
    for (const h of hubs) expect(h.proc.exitCode, (h.output() + h.errors()).slice(-2000)).toBeNull();
  }, 300_000);
});
