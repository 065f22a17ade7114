/**
 * The console's Server page lists the hub processes sharing the database (issue 22), in Debian's
 * Chromium: two hubs on one PostgreSQL database, the console served by the first, and a third row whose
 * process stopped heartbeating 20 s ago (written into `hub_processes` as a killed process leaves it).
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WIDE, buildConsoleIfStale, launchChromium, screenshot } from './support/browser.js';
import { RawSignalRClient } from './support/signalrClient.js';
import { ADMIN_KEY, DEV_KEY, hubsOn } from './support/testHub.js';
import type { TestHub } from './support/testHub.js';
import { postgresServer, testDatabase, testPool } from './support/postgres.js';
import type { TestDatabase } from './support/postgres.js';

const server = await postgresServer();

describe.skipIf(!server.available)("the console's list of hub processes", () => {
  let database: TestDatabase;
  let a: TestHub;
  let b: TestHub;
  let browser: Browser;
  let page: Page;
  const clients: RawSignalRClient[] = [];
  beforeAll(async () => {
    buildConsoleIfStale();
    database = await testDatabase(server);
    [a, b] = await hubsOn(database.url, 2);
    const pool = testPool(database.url, 1);
    await pool.query(
      `insert into hub_processes (id, host, pid, version, started_ms, heartbeat_ms, waiting_polls)
       values ('gone', 'other-host', 4242, '0.0.1', (extract(epoch from now()) * 1000)::bigint - 3600000,
               (extract(epoch from now()) * 1000)::bigint - 20000, 7)`,
    );
    await pool.end();
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: WIDE })).newPage();
    page.setDefaultTimeout(10_000);
  }, 120_000);
  afterAll(async () => {
    clients.forEach((c) => c.close());
    await browser?.close();
    await a?.stop();
    await b?.stop();
    await database?.drop();
  });

  it('shows every process on the database: host and pid, alive or not, version, waiting long-polls', async () => {
    await page.goto(`${a.url}/console/#/server`);
    await page.getByLabel('Access key').fill(ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Server', exact: true }).click();
    const table = page.getByRole('table', { name: 'Hub processes' });
    await table.waitFor();
    const rows = table.locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(3);
    const texts = await rows.allInnerTexts();
    const ours = texts.filter((t) => t.includes(`pid ${process.pid}`));
    expect(ours).toHaveLength(2);
    expect(ours.every((t) => t.includes('● alive') && t.includes(a.services.version))).toBe(true);
    expect(ours.filter((t) => t.includes('serving this page'))).toHaveLength(1);
    const gone = texts.find((t) => t.includes('other-host pid 4242'));
    expect(gone).toContain('○ not answering');
    expect(gone).toContain('0.0.1');
    expect(gone).toContain('7');
    // Each of ours says where it listens; the cards are the figures of the row marked as serving.
    expect(ours.map((t) => [a.url, b.url].filter((url) => t.includes(url)).length)).toEqual([1, 1]);
    const serving = ours.find((t) => t.includes('serving this page'))!;
    expect(serving).toContain(a.url);
    const card = async (name: string) =>
      (await page.getByLabel('This process').locator('div', { hasText: name }).locator('dd').innerText()).trim();
    const servingRow = rows.filter({ hasText: 'serving this page' });
    const cell = async (label: string) => (await servingRow.locator(`td[data-label="${label}"]`).innerText()).trim();
    // Read twice in a row: a refresh between the two reads changes both.
    const agree = async () =>
      (await card('Requests served')) === (await cell('Requests served')) &&
      (await card('Refused authentications')) === (await cell('Refused authentications'));
    await expect.poll(agree).toBe(true);
    await screenshot(page, 'server-processes', { narrow: true, fullPage: true });
  });

  it("lists the serving process's own SignalR connections: who, credential, hubs, transport, since", async () => {
    const connected = async (url: string, who: Record<string, string>, hubName: string, transport: string) => {
      const c = new RawSignalRClient(url, { ...who, AccessKey: DEV_KEY }, [hubName], '1.5');
      clients.push(c);
      await c.negotiate();
      if (transport === 'webSockets') await c.openSocket();
      else await c.connectLongPolling();
      await c.start(transport);
      return c;
    };
    const none = page.getByLabel('No SignalR connections');
    await none.waitFor();
    const packageHost = await connected(
      a.url,
      { SentinelName: 'S1', PackageName: 'P1' },
      'ConstellationHub',
      'webSockets',
    );
    // Another process's connection is that process's to list, not the serving one's.
    await connected(b.url, { SentinelName: 'Consumer', PackageName: 'Elsewhere' }, 'ConsumerHub', 'longPolling');
    const table = page.getByRole('table', { name: 'SignalR connections' });
    // The page refreshes every 5 s.
    await table.waitFor({ timeout: 30_000 });
    const rows = await table.locator('tbody tr').allInnerTexts();
    expect(rows).toHaveLength(1);
    for (const text of ['S1/P1', 'Dev', 'ConstellationHub', 'WebSockets']) expect(rows[0]).toContain(text);
    expect(rows[0]).not.toContain(DEV_KEY);
    expect(await table.locator('tbody tr td[data-label="Since"]').innerText()).toMatch(/\d/);
    expect((await packageHost.request('abort', { transport: 'webSockets' }, {})).status).toBe(200);
    await none.waitFor({ timeout: 30_000 });
  });
});
