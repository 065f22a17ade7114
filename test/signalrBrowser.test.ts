/**
 * Server-sent events in a real browser: Debian's Chromium runs a page on another origin with jQuery and
 * npm's SignalR client (2.2.3, 2.4.3), which connects to the hub over serverSentEvents with credentials
 * (CORS), subscribes, receives a REST push and sends a message a REST long-poller receives.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageRecord } from '../src/hub/records.js';
import { launchChromium } from './support/browser.js';
import { consumer, DEV_KEY, get, hubsStoppedAfterEach, idOf, pkg, post } from './support/testHub.js';

const require = createRequire(import.meta.url);
const hub = hubsStoppedAfterEach();
let browser: Browser;
/** The page's own server, on loopback too (Chromium lets a loopback page reach a loopback hub). */
let pageServer: http.Server;
let pageOrigin: string;
beforeAll(async () => {
  browser = await launchChromium();
  pageServer = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://page').pathname;
    const script = scripts[path];
    if (script) {
      res.writeHead(200, { 'Content-Type': 'text/javascript' });
      res.end(fs.readFileSync(script, 'utf8'));
      return;
    }
    const version = new URL(req.url ?? '/', 'http://page').searchParams.get('v');
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(`<!doctype html><script src="/jquery.js"></script><script src="/signalr-${version}.js"></script>`);
  });
  await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
  // The hub is reached as 127.0.0.1: the page as localhost is another origin.
  pageOrigin = `http://localhost:${(pageServer.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => pageServer?.close(resolve));
});

/** What the page's script uses of jQuery's SignalR client, and keeps on window. */
interface Chain {
  done(f: () => void): Chain;
  fail(f: (e: Error) => void): Chain;
}
interface PageWindow {
  jQuery: {
    hubConnection(
      url: string,
      options: object,
    ): {
      qs: object;
      transport: { name: string };
      createHubProxy(name: string): PageWindow['proxy'];
      start(options: object): Chain;
    };
  };
  proxy: { on(method: string, f: (value: never) => void): void; invoke(method: string, ...args: unknown[]): Chain };
  updates: { Value: unknown }[];
  messages: { Key: string }[];
}

const scripts: Record<string, string> = {
  '/jquery.js': require.resolve('jquery/dist/jquery.js'),
  '/signalr-2.2.js': require.resolve('signalr/jquery.signalR.js'),
  '/signalr-2.4.js': require.resolve('signalr-2.4/jquery.signalR.js'),
};

describe.each(['2.2', '2.4'])('signalr %s in Chromium', (version) => {
  it('connects over server-sent events from another origin, both ways with REST', async () => {
    const h = await hub();
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${pageOrigin}/index.html?v=${version}`);
      const transport = await page.evaluate(
        ([url, key]) =>
          new Promise<string>((resolve, reject) => {
            const w = window as unknown as PageWindow;
            const connection = w.jQuery.hubConnection(url, { useDefaultPath: true });
            connection.qs = { SentinelName: 'Consumer', PackageName: 'Browser', AccessKey: key };
            const proxy = connection.createHubProxy('consumerHub');
            w.updates = [];
            w.messages = [];
            proxy.on('updateStateObject', (so: { Value: unknown }) => w.updates.push(so));
            proxy.on('receiveMessage', (m: { Key: string }) => w.messages.push(m));
            w.proxy = proxy;
            connection
              .start({ transport: 'serverSentEvents' })
              .done(() => resolve(connection.transport.name))
              .fail((e: Error) => reject(new Error(String(e))));
          }),
        [`${h.url}/`, DEV_KEY],
      );
      expect(transport).toBe('serverSentEvents');
      await page.evaluate(() =>
        (window as unknown as PageWindow).proxy.invoke('SubscribeStateObjects', 'S1', 'P1', 'Light', '*'),
      );
      expect((await post(h, 'platform/PushStateObject', pkg('S1', 'P1'), { Name: 'Light', Value: 'on' })).status).toBe(
        204,
      );
      await page.waitForFunction(() => (window as unknown as PageWindow).updates.some((so) => so.Value === 'on'));

      const listener = consumer('Listener');
      const subscription = idOf(await get(h, 'consumer/SubscribeToMessage', listener));
      const polled = get(h, 'consumer/GetMessages', listener, { subscriptionId: subscription, timeout: 60_000 });
      await page.evaluate(() =>
        (window as unknown as PageWindow).proxy.invoke(
          'SendMessage',
          { Scope: 'Package', Args: ['Consumer/Listener'] },
          'Hi',
          'there',
        ),
      );
      expect((await polled).json<MessageRecord[]>()).toMatchObject([{ Key: 'Hi', Data: 'there', Sender: { Type: 0 } }]);

      expect(
        (await post(h, 'consumer/SendMessage', listener, { Scope: { Scope: 'All' }, Key: 'Broadcast', Data: 7 }))
          .status,
      ).toBe(204);
      await page.waitForFunction(() => (window as unknown as PageWindow).messages.some((m) => m.Key === 'Broadcast'));
    } finally {
      await context.close();
    }
  });
});
