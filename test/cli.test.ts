/** The CLI as a user runs it: a child process, its output, and a clean stop on a signal. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CliProcess } from './support/hubCli.js';
import { runCli } from './support/hubCli.js';
import { get, idOf, tempDir } from './support/testHub.js';
import { waitingPolls } from './support/waitingPolls.js';

const startCli = (dataDir: string, env: Record<string, string> = {}) => runCli([], { HUB_DATA_DIR: dataDir, ...env });
const listening = async (cli: CliProcess) => (await cli.waitFor(/hub listening on (http:\/\/\S+)/))[1];

describe('the command line', () => {
  it('first start prints the generated key once; SIGTERM answers waiting polls and exits 0 with the WAL checkpointed', async () => {
    const dataDir = tempDir();
    const cli = startCli(dataDir);
    const url = await listening(cli);
    const key = /access key \(not shown again\): (\S+)/.exec(cli.output())?.[1];
    expect(key).toBeDefined();
    const management = { SentinelName: 'Management', PackageName: 'CLI', AccessKey: key as string };
    expect((await get({ url }, 'management/CheckAccess', management)).status).toBe(200);
    const consumer = { SentinelName: 'Consumer', PackageName: 'CLI', AccessKey: key as string };
    const id = idOf(await get({ url }, 'consumer/SubscribeToMessage', consumer));
    // Its timeout outlives the test's: only the shutdown can answer it.
    const waiting = get({ url }, 'consumer/GetMessages', consumer, { subscriptionId: id, timeout: 120_000 });
    await waitingPolls({ url }, 1, key as string);
    cli.proc.kill('SIGTERM');
    const reply = await waiting;
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual([]);
    expect(await cli.exited).toBe(0);
    const wal = path.join(dataDir, 'hub.db-wal');
    expect(!fs.existsSync(wal) || fs.statSync(wal).size === 0).toBe(true);

    // A second start does not print a key again.
    const again = startCli(dataDir);
    await listening(again);
    expect(again.output()).not.toMatch(/access key/);
    again.proc.kill('SIGINT');
    expect(await again.exited).toBe(0);
  });

  it('refuses to start on a bad environment value or configuration file, saying which', async () => {
    const dataDir = tempDir();
    const badEnv = startCli(dataDir, { HUB_SYNC: 'sometimes' });
    expect(await badEnv.exited).toBe(1);
    expect(badEnv.errors()).toMatch(/^hub did not start: Invalid environment variable HUB_SYNC/);
    expect(badEnv.errors()).not.toMatch(/at /);
    fs.writeFileSync(
      path.join(dataDir, 'hub.config.xml'),
      '<hub><credentials><credential name="A"/></credentials></hub>',
    );
    const badFile = startCli(dataDir);
    expect(await badFile.exited).toBe(1);
    expect(badFile.errors()).toMatch(
      /configuration file .*hub.config.xml: <credentials>\/<credential>\[1\] attribute "accessKey"/,
    );
  });
});
