/**
 * The PostgreSQL twin of configRace.test.ts, across two real hub processes on one database: management
 * writes through both processes race HTTP reloads and SIGHUPs on both. Every write answered 200 is
 * served at once by the process that answered it, is in the database's document, and is served by the
 * other process once it applied the change (docs/configuration.md, "On PostgreSQL").
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serializeConfiguration } from '../src/config/xmlFile.js';
import { admin, get, post, tempDir, testConfiguration } from './support/testHub.js';
import type { TestDatabase } from './support/postgres.js';
import { freePort, postgresServer, testDatabase, testPool } from './support/postgres.js';

const server = await postgresServer();
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ROUNDS = Number(process.env.HUB_RACE_ROUNDS ?? 1);
const WRITERS = 3;
const WRITES_PER_WRITER = 6;

interface HubProcess {
  url: string;
  proc: ChildProcess;
  output: () => string;
}

async function startProcess(databaseUrl: string): Promise<HubProcess> {
  const dataDir = tempDir();
  fs.writeFileSync(path.join(dataDir, 'hub.config.xml'), serializeConfiguration(testConfiguration()));
  const port = await freePort();
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      HUB_DATA_DIR: dataDir,
      HUB_PORT: String(port),
      HUB_HOST: '127.0.0.1',
      HUB_LOG_LEVEL: 'warn',
      HUB_DATABASE_URL: databaseUrl,
      HUB_AUTH_FAILURE_DELAY_MS: '0',
      HUB_AUTH_FAILURE_STEP_MS: '0',
      HUB_AUTH_FAILURE_LIMIT: '1000000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  proc.stdout.on('data', (c: Buffer) => (output += c.toString()));
  proc.stderr.on('data', (c: Buffer) => (output += c.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (output.includes(`hub listening on http://127.0.0.1:${port}`)) {
        clearInterval(timer);
        resolve();
      }
    }, 20);
    proc.once('exit', (code) => {
      clearInterval(timer);
      reject(new Error(`hub exited (${code}) before listening: ${output}`));
    });
  });
  return { url: `http://127.0.0.1:${port}`, proc, output: () => output };
}

const checkAccess = async (h: { url: string }, key: string) =>
  (await get(h, 'consumer/CheckAccess', { SentinelName: 'Consumer', PackageName: 'Race', AccessKey: key })).status;

describe.skipIf(!server.available)('management writes through two processes racing reloads and SIGHUPs', () => {
  let database: TestDatabase;
  const hubs: HubProcess[] = [];

  beforeAll(async () => {
    database = await testDatabase(server);
    for (let i = 0; i < 2; i++) hubs.push(await startProcess(database.url));
  }, 240_000);
  afterAll(async () => {
    for (const h of hubs) h.proc.kill('SIGKILL');
    await database?.drop();
  });

  it('every acknowledged write is served at once by its process, kept in the database, and applied by the other', async () => {
    const acknowledged: { name: string; key: string }[] = [];
    const refused: string[] = [];
    const notServed: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      let writing = true;
      const writers = hubs.flatMap((h, p) =>
        Array.from({ length: WRITERS }, async (_, w) => {
          for (let i = 0; i < WRITES_PER_WRITER; i++) {
            const written = { name: `r${round}p${p}w${w}_${i}`, key: `race-key-${round}-${p}-${w}-${i}` };
            const reply = await post(h, 'management/credentials', admin, {
              Name: written.name,
              AccessKey: written.key,
            });
            if (reply.status !== 200) {
              refused.push(`${written.name}: ${reply.status} ${reply.text}`);
              continue;
            }
            acknowledged.push(written);
            const check = await checkAccess(h, written.key);
            if (check !== 200) notServed.push(`${written.name} → ${check} just after its 200`);
          }
        }),
      );
      const reloads = hubs.flatMap((h) => [
        (async () => {
          while (writing) {
            const reply = await get(h, 'management/configuration/reload', admin);
            if (reply.status !== 200) refused.push(`reload: ${reply.status} ${reply.text}`);
          }
        })(),
        (async () => {
          while (writing) {
            h.proc.kill('SIGHUP');
            await new Promise((r) => setTimeout(r, 5));
          }
        })(),
      ]);
      await Promise.all(writers);
      writing = false;
      await Promise.all(reloads);
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
        await new Promise((r) => setTimeout(r, 50));
        missing = await missingOn();
      }
      expect(missing.slice(0, 3), `${h.url} lists every acknowledged credential`).toEqual([]);
      const rejected: string[] = [];
      for (const w of acknowledged) if ((await checkAccess(h, w.key)) !== 200) rejected.push(w.name);
      expect(rejected.slice(0, 3)).toEqual([]);
    }
    for (const h of hubs) expect(h.proc.exitCode, h.output().slice(-2000)).toBeNull();
  }, 300_000);
});
