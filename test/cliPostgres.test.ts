/**
 * The command line on PostgreSQL as a new user meets it (issue 30): connection failures say what
 * failed, where and what to do (not "PostgreSQL migration failed"); `hub migrate` refuses a database
 * holding anyone else's table, leaving it as it was; the first start's Admin key survives a start that
 * fails. Real processes, a database of this file's own on the machine's server, temp dirs removed after.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killCliProcesses, runCli } from './support/hubCli.js';
import type { TestDatabase } from './support/postgres.js';
import { migratedDatabase, postgresServer, testClient, testDatabase, withDatabase } from './support/postgres.js';
import { get, pkg, startTestHub } from './support/testHub.js';

const server = await postgresServer();
const made: string[] = [];
const scratch = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hub-cli-pg-'));
  made.push(dir);
  return dir;
};

afterAll(() => {
  killCliProcesses();
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

/** A port nothing listens on (a server's, closed). */
async function closedPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** The data directory of a stopped SQLite hub holding one StateObject. */
async function stoppedSqliteHub(): Promise<string> {
  const hub = await startTestHub({ dataDir: scratch() });
  await get(hub, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'Moved', value: 5 });
  await hub.stop();
  return hub.dataDir;
}

/** Every relation outside the system schemas with its kind, and the rows of `mine`. */
async function snapshot(url: string): Promise<unknown> {
  const client = testClient(url);
  await client.connect();
  try {
    const relations = await client.query(
      `select n.nspname, c.relname, c.relkind::text from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg_toast%' order by 1, 2`,
    );
    const mine = await client.query('select x from mine order by x');
    return { relations: relations.rows, mine: mine.rows };
  } finally {
    await client.end();
  }
}

describe.skipIf(!server.available)('the command line on PostgreSQL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await testDatabase(server);
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('an unknown host, a refused connection, a missing database and an unknown role each say what, where and what to do', async () => {
    const dataDir = path.join(scratch(), 'data');
    const port = await closedPort();
    const server5432 = new URL(server.adminUrl);
    const cases: { url: string; args: string[]; prefix: string; said: RegExp }[] = [
      {
        url: 'postgres://nowhere.invalid:1/x',
        args: [],
        prefix: 'hub did not start: ',
        said: /^cannot reach PostgreSQL at nowhere\.invalid:1\/x: the host name "nowhere\.invalid" is not known \(getaddrinfo ENOTFOUND nowhere\.invalid\)\. Check the host in HUB_DATABASE_URL/,
      },
      {
        url: `postgres://postgres:secret@127.0.0.1:${port}/x`,
        args: ['config', 'export'],
        prefix: 'hub config export: ',
        said: new RegExp(
          `^cannot reach PostgreSQL at 127\\.0\\.0\\.1:${port}/x: nothing accepts connections on 127\\.0\\.0\\.1 port ${port} .*Start PostgreSQL, or check the host and port in HUB_DATABASE_URL \\(postgres://postgres:\\*\\*\\*@127\\.0\\.0\\.1:${port}/x\\)`,
        ),
      },
      {
        url: withDatabase(server.adminUrl, 'hub_no_such_database'),
        args: ['migrate'],
        prefix: 'hub migrate: ',
        said: new RegExp(
          `^PostgreSQL at ${server5432.hostname}:${server5432.port || 5432} has no database "hub_no_such_database" .*Create it \\(createdb `,
        ),
      },
      {
        url: `postgres://hub_no_such_role@${server5432.host}/postgres`,
        args: [],
        prefix: 'hub did not start: ',
        said: /^PostgreSQL at .*\/postgres refused user "hub_no_such_role" \(role "hub_no_such_role" does not exist\)\. Create the role \(createuser /,
      },
    ];
    const migrateFrom = await stoppedSqliteHub();
    for (const { url, args, prefix, said } of cases) {
      const cli = runCli(args, {
        HUB_DATABASE_URL: url,
        HUB_DATA_DIR: args[0] === 'migrate' ? migrateFrom : dataDir,
      });
      expect(await cli.exited, url).toBe(1);
      const line = cli.errors();
      expect(line.startsWith(prefix), line).toBe(true);
      expect(line.slice(prefix.length)).toMatch(said);
      expect(line).not.toMatch(/migration|secret|\n./);
    }
  });

  it("`hub migrate` refuses a database holding a table that is not the hub's, and leaves it exactly as it was", async () => {
    const dataDir = await stoppedSqliteHub();
    const client = testClient(database.url);
    await client.connect();
    await client.query('create table mine (x int)');
    await client.query('insert into mine values (42)');
    await client.end();
    const before = await snapshot(database.url);
    const cli = runCli(['migrate'], { HUB_DATA_DIR: dataDir, HUB_DATABASE_URL: database.url });
    expect(await cli.exited).toBe(1);
    expect(cli.errors()).toMatch(
      new RegExp(
        `^hub migrate: the PostgreSQL database "${database.name}" holds tables that are not the hub's \\(mine\\): the hub's tables belong in a database of their own\\.`,
      ),
    );
    expect(await snapshot(database.url)).toEqual(before);
    expect(fs.existsSync(path.join(dataDir, 'hub.pid'))).toBe(false);
  });

  it("`hub migrate` copies into a database holding only the hub's tables, empty (a copy tried before)", async () => {
    const migrated = await migratedDatabase(server);
    try {
      const dataDir = await stoppedSqliteHub();
      const cli = runCli(['migrate'], { HUB_DATA_DIR: dataDir, HUB_DATABASE_URL: migrated.database.url });
      expect(await cli.exited, cli.errors()).toBe(0);
      expect(cli.output()).toMatch(/^state_objects: 1$/m);
    } finally {
      await migrated.drop();
    }
  });

  it('the first Admin key survives a first start that fails on a busy port; the next start shows it and it manages the hub', async () => {
    const fresh = await testDatabase(server);
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    try {
      const dataDir = path.join(scratch(), 'data');
      const env = { HUB_DATA_DIR: dataDir, HUB_DATABASE_URL: fresh.url };
      const first = runCli([], { ...env, HUB_PORT: String((busy.address() as net.AddressInfo).port) });
      expect(await first.exited).toBe(1);
      const failedKey = /access key (\S+) is in/.exec(first.errors())?.[1];
      expect(failedKey, first.errors()).toBeDefined();
      // The key is in the database's configuration, not in any file the hub reads.
      expect(fs.existsSync(path.join(dataDir, 'hub.config.xml'))).toBe(false);

      const second = runCli([], env);
      const [, url] = await second.waitFor(/hub listening on (http:\/\/\S+)/);
      expect(/access key \(not shown again\): (\S+)/.exec(second.output())?.[1]).toBe(failedKey);
      const management = { SentinelName: 'Management', PackageName: 'CLI', AccessKey: failedKey as string };
      expect((await get({ url }, 'management/credentials', management)).status).toBe(200);
      second.proc.kill('SIGTERM');
      expect(await second.exited).toBe(0);
      expect(fs.existsSync(path.join(dataDir, 'first-admin-key'))).toBe(false);
    } finally {
      await new Promise((resolve) => busy.close(resolve));
      await fresh.drop();
    }
  });
});
