/**
 * The configuration in PostgreSQL mode (issue 22, docs/configuration.md "On PostgreSQL"): one document in
 * the database for every hub process. The first start imports the file; a management write through one
 * hub is applied by another; concurrent writes through two hubs all survive; a posted document blocks
 * writes until a reload applies it; a restart keeps the database's version and never writes the file;
 * `hub config export` / `hub config import` (real CLI processes) move the document out and in byte for
 * byte, and an invalid import changes nothing.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serializeConfiguration } from '../src/config/xmlFile.js';
import type { TestHub } from './support/testHub.js';
import { admin, get, post, startTestHub, tempDir, testConfiguration, configFileText } from './support/testHub.js';
import type { TestDatabase } from './support/postgres.js';
import { postgresServer, testDatabase, testPool } from './support/postgres.js';

const server = await postgresServer();
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const run = promisify(execFile);

const checkAccess = async (h: TestHub, key: string) =>
  (await get(h, 'consumer/CheckAccess', { SentinelName: 'Consumer', PackageName: 'Conf', AccessKey: key })).status;

const credentialNames = async (h: TestHub) =>
  (await get(h, 'management/credentials', admin)).json<{ Name: string }[]>().map((c) => c.Name);

/** A CLI process under tsx takes seconds to start on a loaded machine. */
const CLI_TEST_MS = 240_000;

/** Waits until `condition` holds (another process applies a change after its notification). */
const eventually = (condition: () => Promise<boolean>, what: string) =>
  expect.poll(condition, { message: `never: ${what}` }).toBe(true);

/** `hub config …` as a user runs it; resolves with its exit code and output (never rejects). */
async function hubConfig(
  url: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'config', ...args], {
      cwd: ROOT,
      env: { ...process.env, HUB_DATABASE_URL: url, HUB_DATA_DIR: tempDir(), HUB_LOG_LEVEL: 'warn', ...env },
      encoding: 'utf8',
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe.skipIf(!server.available)('the configuration in PostgreSQL mode', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let a: TestHub;
  let b: TestHub;
  // Two different files: the first start imports A's; B's is not used.
  const fileA = serializeConfiguration(testConfiguration()).replace('<credentials>', '<credentials>\n    ');
  const fileB = serializeConfiguration({ ...testConfiguration(), sentinels: [] });
  const document = async () =>
    (
      await pool.query<{ version: number; text: string; pending: string | null }>(
        'select * from configuration_document',
      )
    ).rows[0];

  beforeAll(async () => {
    database = await testDatabase(server);
    pool = testPool(database.url);
    a = await startTestHub({ config: fileA, options: { databaseUrl: database.url, authFailureStepMs: 0 } });
    b = await startTestHub({ config: fileB, options: { databaseUrl: database.url, authFailureStepMs: 0 } });
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await pool?.end();
    await database?.drop();
  });

  it('the first start imports the file byte for byte; the second takes the database’s', async () => {
    const stored = await document();
    expect(stored).toMatchObject({ version: 1, text: fileA, pending: null });
    const history = await pool.query('select written_by, reason, applied, text from configuration_versions');
    expect(history.rows).toEqual([{ written_by: '(file)', reason: 'import', applied: true, text: fileA }]);
    // B serves A's file (its sentinels), not its own.
    expect((await get(b, 'management/sentinels', admin)).json<unknown[]>()).toHaveLength(2);
    expect((await get(b, 'management/configuration', admin)).text).toBe(fileA);
  });

  it('a management write through A is applied by B, and neither file is written', async () => {
    const reply = await post(a, 'management/credentials', admin, { Name: 'FromA', AccessKey: 'from-a-key-0001' });
    expect(reply.status).toBe(200);
    expect(await checkAccess(a, 'from-a-key-0001')).toBe(200);
    await eventually(
      async () => (await checkAccess(b, 'from-a-key-0001')) === 200,
      'B accepts the key added through A',
    );
    expect(await credentialNames(b)).toContain('FromA');
    expect((await document()).text).toContain('from-a-key-0001');
    expect(configFileText(a)).toBe(fileA);
    expect(configFileText(b)).toBe(fileB);
  });

  it('concurrent writes through A and B all survive (no lost update)', async () => {
    const written: string[] = [];
    await Promise.all(
      [a, b].flatMap((h, i) =>
        Array.from({ length: 4 }, async (_, w) => {
          for (let n = 0; n < 5; n++) {
            const name = `c${i}w${w}n${n}`;
            const reply = await post(h, 'management/credentials', admin, { Name: name, AccessKey: `${name}-key-0001` });
            expect(reply.status, reply.text).toBe(200);
            written.push(name);
            // Served at once by the hub that answered 200.
            expect(await checkAccess(h, `${name}-key-0001`)).toBe(200);
          }
        }),
      ),
    );
    expect(written).toHaveLength(40);
    const text = (await document()).text;
    expect(written.filter((name) => !text.includes(`"${name}"`))).toEqual([]);
    for (const h of [a, b])
      await eventually(async () => {
        const names = new Set(await credentialNames(h));
        return written.every((name) => names.has(name));
      }, 'both hubs list every acknowledged credential');
  });

  it('a posted document blocks writes on every hub until a reload applies it everywhere', async () => {
    const posted = serializeConfiguration({
      ...testConfiguration(),
      credentials: [
        ...testConfiguration().credentials,
        { ...testConfiguration().credentials[1], name: 'Posted', accessKey: 'posted-key-0001' },
      ],
    });
    expect((await post(a, 'management/configuration', admin, posted, 'application/xml')).status).toBe(204);
    expect((await document()).pending).toBe(posted);
    expect((await get(b, 'management/configuration', admin)).text).toBe(posted);
    const refused = await post(b, 'management/credentials', admin, { Name: 'Blocked', AccessKey: 'blocked-key-0001' });
    expect(refused.status).toBe(409);
    expect(refused.json<{ Code?: string }>()).toMatchObject({ Code: 'ConfigurationPending' });
    expect(await checkAccess(b, 'posted-key-0001')).not.toBe(200);
    expect(await b.reloadConfiguration()).toBe(true); // SIGHUP on B
    expect(await checkAccess(b, 'posted-key-0001')).toBe(200);
    await eventually(async () => (await checkAccess(a, 'posted-key-0001')) === 200, 'A applies what B reloaded');
    expect(await document()).toMatchObject({ text: posted, pending: null });
    expect(
      (await post(a, 'management/credentials', admin, { Name: 'After', AccessKey: 'after-key-0001' })).status,
    ).toBe(200);
  });

  it('a restart keeps the database’s version: the file, still the first one, is not read again nor written', async () => {
    const before = await document();
    await a.stop();
    a = await startTestHub({ dataDir: a.dataDir, options: { databaseUrl: database.url, authFailureStepMs: 0 } });
    expect(await document()).toEqual(before);
    expect(configFileText(a)).toBe(fileA);
    expect(await checkAccess(a, 'after-key-0001')).toBe(200);
    expect((await get(a, 'management/configuration', admin)).text).toBe(before.text);
  });

  it(
    'hub config export and import move the document out and in byte for byte; running hubs apply the import',
    async () => {
      const exported = await hubConfig(database.url, ['export']);
      expect(exported.code, exported.stderr).toBe(0);
      expect(exported.stdout).toBe((await document()).text);

      // Edited outside (a credential added, a comment, odd spacing): imported as it is.
      const edited = exported.stdout.replace(
        '<credentials>',
        '<credentials>\n  <!-- imported -->  <credential name="Imported" accessKey="imported-key-0001" enable="true" />',
      );
      const file = path.join(tempDir(), 'edited.xml');
      fs.writeFileSync(file, edited);
      const imported = await hubConfig(database.url, ['import', file]);
      expect(imported.code, imported.stderr).toBe(0);
      expect(imported.stdout).toMatch(/imported .*edited\.xml: configuration version \d+/);
      expect((await document()).text).toBe(edited);
      for (const h of [a, b])
        await eventually(
          async () => (await checkAccess(h, 'imported-key-0001')) === 200,
          'every hub applies the import',
        );

      // Out again, into a file (only a new one): the imported bytes.
      const out = path.join(tempDir(), 'out.xml');
      expect((await hubConfig(database.url, ['export', out])).code).toBe(0);
      expect(fs.readFileSync(out)).toEqual(Buffer.from(edited));
      const overwrite = await hubConfig(database.url, ['export', out]);
      expect(overwrite.code).toBe(1);
      expect(overwrite.stderr).toMatch(/EEXIST/);
    },
    CLI_TEST_MS,
  );

  it(
    'hub config import refuses what would not start a hub, changing nothing',
    async () => {
      const before = await document();
      const versions = (await pool.query('select count(*)::int as n from configuration_versions')).rows[0];
      const dir = tempDir();
      const broken = path.join(dir, 'broken.xml');
      fs.writeFileSync(broken, before.text.replace('</credentials>', '<credential name="Half"'));
      for (const file of [broken, path.join(dir, 'missing.xml')]) {
        const result = await hubConfig(database.url, ['import', file]);
        expect(result.code, file).toBe(1);
        expect(result.stderr).toMatch(/^hub config import: /);
      }
      expect(await document()).toEqual(before);
      expect((await pool.query('select count(*)::int as n from configuration_versions')).rows[0]).toEqual(versions);
    },
    CLI_TEST_MS,
  );

  it(
    'hub config import with HUB_CONFIG imports that file; without HUB_DATABASE_URL it refuses',
    async () => {
      const result = await hubConfig(database.url, ['import'], { HUB_CONFIG: a.options.configPath });
      expect(result.code, result.stderr).toBe(0);
      expect((await document()).text).toBe(fileA);
      const env = { ...process.env };
      delete env.HUB_DATABASE_URL;
      const sqlite = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'config', 'export'], {
        cwd: ROOT,
        env: { ...env, HUB_DATA_DIR: tempDir() },
        encoding: 'utf8',
      }).catch((error: { code: number; stderr: string }) => error);
      expect(sqlite).toMatchObject({ code: 1 });
      expect((sqlite as { stderr: string }).stderr).toMatch(/needs HUB_DATABASE_URL/);
    },
    CLI_TEST_MS,
  );
});
