/**
 * The web console in a real browser (Debian's Chromium, playwright-core) against a real hub on a temp
 * directory: each page exercised as a person would, one browser and one page for the whole file.
 * CONSOLE_SCREENSHOTS=1 also saves a screenshot of each page into docs/console/.
 */
import { strToU8, zipSync } from 'fflate';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WIDE, buildConsoleIfStale, launchChromium, screenshot as saveScreenshot } from './support/browser.js';
import { circlePng } from './support/png.js';
import type { TestHub } from './support/testHub.js';
import {
  ADMIN_KEY,
  admin,
  call,
  consumer,
  get,
  idOf,
  pkg,
  post,
  startTestHub,
  testConfiguration,
  configFileText,
} from './support/testHub.js';

let hub: TestHub;
let browser: Browser;
let page: Page;
const consoleOutput: string[] = [];
const requests: string[] = [];
const failures: string[] = [];

const screenshot = (name: string, options?: { narrow?: boolean; fullPage?: boolean }) =>
  saveScreenshot(page, name, options);

async function open(slug: string, heading: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: heading, exact: true }).click();
  await expect.poll(() => page.url()).toContain(`#/${slug}`);
  await page.getByRole('heading', { level: 1, name: heading, exact: true }).waitFor();
}

const thermoZip = (name = 'Thermo') =>
  Buffer.from(
    zipSync({
      'manifest.json': strToU8(
        JSON.stringify({
          Name: name,
          Version: '1.2.0',
          Description: 'Reads temperatures',
          Author: 'Home',
          Icon: 'icon.png',
          Settings: [
            { Key: 'Interval', Type: 'Int32', Description: 'Seconds between readings', DefaultValue: 60 },
            { Key: 'Layout', Type: 'Xml', Description: 'Rooms', Xsd: 'layout.xsd' },
          ],
        }),
      ),
      'icon.png': circlePng(),
      'layout.xsd': strToU8(
        '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="layout"/></xs:schema>',
      ),
    }),
  );

const descriptor = {
  PackageName: 'P1',
  MessageCallbacks: [
    {
      MessageKey: 'SetLevel',
      Description: 'Sets the light level.',
      Parameters: [
        { Name: 'level', TypeName: 'System.Int32', Type: 2, Description: 'Percent' },
        { Name: 'on', TypeName: 'System.Boolean', Type: 2 },
        { Name: 'color', TypeName: 'Demo.Color', Type: 2 },
      ],
    },
    {
      MessageKey: 'Add',
      Description: 'Adds two numbers and answers the sum.',
      ResponseType: 'System.Int32',
      Parameters: [
        { Name: 'a', TypeName: 'System.Int32', Type: 2 },
        { Name: 'b', TypeName: 'System.Int32', Type: 2, IsOptional: true, DefaultValue: 1 },
      ],
    },
  ],
  MessageCallbackTypes: [
    {
      TypeName: 'Color',
      TypeFullname: 'Demo.Color',
      IsEnum: true,
      EnumValues: [
        { Name: 'Warm', TypeName: 'Int32', Type: 0 },
        { Name: 'Cold', TypeName: 'Int32', Type: 0 },
      ],
    },
  ],
};

beforeAll(async () => {
  buildConsoleIfStale();
  hub = await startTestHub({ options: { authFailureStepMs: 0 } });
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: WIDE, colorScheme: 'light' });
  page = await context.newPage();
  // A locator that never shows fails with its own name, well within the test's time.
  page.setDefaultTimeout(10_000);
  page.on('console', (message) => consoleOutput.push(`${message.type()}: ${message.text()}`));
  page.on('pageerror', (error) => consoleOutput.push(`pageerror: ${error.message}`));
  page.on('request', (request) => requests.push(new URL(request.url()).pathname));
  page.on('requestfailed', (request) =>
    failures.push(
      `failed ${request.failure()?.errorText} ${new URL(request.url()).pathname}${new URL(request.url()).search}`,
    ),
  );
  page.on('response', (response) => {
    if (response.status() >= 400)
      failures.push(`${response.status()} ${response.request().method()} ${new URL(response.url()).pathname}`);
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await hub?.stop();
});

describe('the console', () => {
  it('loads quietly, asks for an access key, and makes no request that needs one before sign-in', async () => {
    const loaded: Promise<{ path: string; encoding: string; bytes: number }>[] = [];
    const measure = (response: import('playwright-core').Response) =>
      loaded.push(
        response
          .request()
          .sizes()
          .then((sizes) => ({
            path: new URL(response.url()).pathname,
            encoding: response.headers()['content-encoding'] ?? 'identity',
            bytes: sizes.responseBodySize + sizes.responseHeadersSize,
          })),
      );
    page.on('response', measure);
    const response = await page.goto(`${hub.url}/`);
    expect(response?.url()).toBe(`${hub.url}/console/`);
    await page.getByLabel('Access key').waitFor();
    await page.waitForLoadState('networkidle');
    page.off('response', measure);
    const transferred = await Promise.all(loaded);
    const total = transferred.reduce((sum, r) => sum + r.bytes, 0);
    console.log(
      `first load: ${total} bytes transferred (${transferred.map((r) => `${r.path} ${r.encoding} ${r.bytes}`).join(', ')})`,
    );
    // Scripts and styles go out compressed (Chromium asks for brotli only over https: gzip here).
    expect(transferred.filter((r) => /\.(js|css)$/.test(r.path)).map((r) => r.encoding)).toEqual(['gzip', 'gzip']);
    expect(total).toBeLessThan(300 * 1024);
    expect(consoleOutput).toEqual([]);
    expect(requests.filter((p) => p !== '/' && !p.startsWith('/console/'))).toEqual([]);
    await screenshot('sign-in', { narrow: true });
  });

  it('refuses a wrong key, saying so in an alert', async () => {
    await page.getByLabel('Access key').fill('not-the-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('Wrong access key: Authorization has been denied for this request.');
    expect(await page.getByRole('navigation', { name: 'Pages' }).count()).toBe(0);
  });

  it('signs in with a management key and names every page in the navigation', async () => {
    await page.getByLabel('Access key').fill(ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const nav = page.getByRole('navigation', { name: 'Pages' });
    await nav.waitFor();
    const names = await nav.getByRole('link').allTextContents();
    expect(names).toEqual([
      'Overview',
      'StateObjects',
      'MessageCallbacks',
      'Messages',
      'Logs',
      'Credentials',
      'Sentinels',
      'Configuration',
      'Repository',
      'Server',
    ]);
    expect(await page.evaluate('sessionStorage.length')).toBe(1);
  });

  it('shows a pushed StateObject, then its updates, without reloading', async () => {
    await open('stateobjects', 'StateObjects');
    const navigations: string[] = [];
    page.on('framenavigated', (frame) => navigations.push(frame.url()));
    expect(
      (await get(hub, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'Temperature', value: 21.5 })).status,
    ).toBe(204);
    const row = page.locator('tr[data-key="S1/P1/Temperature"]');
    await row.getByText('21.5', { exact: true }).waitFor();
    expect(
      (await get(hub, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'Temperature', value: 1234567.25 })).status,
    ).toBe(204);
    // Numbers in full, grouped: never "1.2M" nor an exponent.
    await row.getByText('1,234,567.25', { exact: true }).waitFor();
    expect(
      (
        await post(hub, 'platform/PushStateObject', pkg('S1', 'P2'), {
          Name: 'Room',
          Value: { Name: 'Kitchen', Lamps: [1, 2] },
        })
      ).status,
    ).toBe(204);
    await page.locator('tr[data-key="S1/P2/Room"]').waitFor();
    expect(navigations).toEqual([]);
  });

  it('measures the time from a push to its appearance in the explorer', async () => {
    // The page notes when each value first shows; the push is timed from before its request is sent.
    await page.evaluate(`(() => {
      window.__seen = {};
      const note = () => {
        const cell = document.querySelector('tr[data-key="S1/P1/Latency"] td.value code');
        if (cell && !(cell.textContent in window.__seen)) window.__seen[cell.textContent] = Date.now();
      };
      new MutationObserver(note).observe(document.body, { subtree: true, childList: true, characterData: true });
    })()`);
    const latencies: number[] = [];
    for (let i = 1; i <= 25; i++) {
      const value = 10_000 + i;
      const sent = Date.now();
      expect((await get(hub, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'Latency', value })).status).toBe(
        204,
      );
      const text = value.toLocaleString('en-US');
      // Polled from outside: the page's policy forbids the eval that waitForFunction needs.
      const seen = () => page.evaluate<number | null>(`window.__seen[${JSON.stringify(text)}] ?? null`);
      await expect.poll(seen, { interval: 20 }).not.toBeNull();
      latencies.push((await seen())! - sent);
    }
    latencies.sort((a, b) => a - b);
    const p50 = latencies[Math.floor(latencies.length / 2)];
    console.log(`push → explorer: p50 ${p50} ms, max ${latencies.at(-1)} ms over ${latencies.length} pushes`);
    // The chart of a numeric object's values seen while the page is open.
    await page.getByRole('img', { name: /History of Latency: 2\d values seen/ }).waitFor();
    await page.getByLabel('Name').fill('Temp*');
    await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
    await page.getByLabel('Name').fill('');
    await screenshot('stateobjects', { narrow: true });
  });

  it('generates MessageCallback forms that send what the package receives, and shows a saga reply', async () => {
    expect((await post(hub, 'platform/DeclarePackageDescriptor', pkg('S1', 'P1'), descriptor)).status).toBe(204);
    const subscription = idOf(await get(hub, 'platform/SubscribeToMessage', pkg('S1', 'P1')));
    await open('messagecallbacks', 'MessageCallbacks');
    const setLevel = page.getByRole('form', { name: 'Send SetLevel' });
    await setLevel.getByLabel('level', { exact: true }).fill('75');
    await setLevel.getByLabel('on', { exact: true }).check();
    await setLevel.getByLabel('color', { exact: true }).selectOption('Cold');
    // The scope defaults to the package that declared the callback.
    expect(await setLevel.getByLabel('Kind').inputValue()).toBe('Package');
    expect(await setLevel.getByLabel('Package', { exact: true }).inputValue()).toBe('P1');
    const curl = await page.getByLabel('curl command').first().textContent();
    expect(curl).toContain(`"Key":"SetLevel","Data":[75,true,"Cold"]`);
    await setLevel.getByRole('button', { name: 'Send SetLevel' }).click();
    await setLevel.getByRole('status').getByText('Sent.').waitFor();
    const received = await get(hub, 'platform/GetMessages', pkg('S1', 'P1'), {
      subscriptionId: subscription,
      timeout: 5000,
    });
    const [message] = received.json<{ Key: string; Data: unknown; Sender: { FriendlyName: string } }[]>();
    expect(message).toMatchObject({
      Key: 'SetLevel',
      Data: [75, true, 'Cold'],
      Sender: { FriendlyName: 'Consumer/Console' },
    });

    // The package answers the saga as firmware does: __Response, same SagaId, to the sender.
    const answered = (async () => {
      const polled = await get(hub, 'platform/GetMessages', pkg('S1', 'P1'), {
        subscriptionId: subscription,
        timeout: 20_000,
      });
      const [saga] =
        polled.json<{ Key: string; Data: number[]; Scope: { SagaId: string }; Sender: { FriendlyName: string } }[]>();
      expect(saga.Key).toBe('Add');
      const reply = {
        Scope: { Scope: 'Package', Args: [saga.Sender.FriendlyName], SagaId: saga.Scope.SagaId },
        Key: '__Response',
        Data: saga.Data[0] + saga.Data[1],
      };
      expect((await post(hub, 'platform/SendMessage', pkg('S1', 'P1'), reply)).status).toBe(204);
    })();
    const add = page.getByRole('form', { name: 'Send Add' });
    await add.getByLabel('a', { exact: true }).fill('40');
    expect(await add.getByLabel('b', { exact: true }).inputValue()).toBe('1');
    await add.getByLabel('b', { exact: true }).fill('2');
    await add.getByRole('button', { name: 'Send Add as a saga' }).click();
    await answered;
    const response = add.getByLabel('Response of Add');
    await response.waitFor();
    expect(await response.textContent()).toContain('__Response from S1/P1');
    expect(await response.locator('code').textContent()).toBe('42');
    await screenshot('messagecallbacks', { narrow: true });
  });

  it('shows messages for its own subscription live, groups included', async () => {
    await open('messages', 'Messages');
    await page.getByLabel('Group name').fill('Lights');
    await page.getByRole('button', { name: 'Join group' }).click();
    await page.getByText('Groups joined:').getByText('Lights').waitFor();
    const sent = await get(hub, 'consumer/SendMessage', consumer('Wall'), {
      scope: 'Group',
      args: 'Lights',
      key: 'Dim',
      data: '{"level":30}',
    });
    expect(sent.status).toBe(204);
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'Dim' }) });
    await row.waitFor();
    expect(await row.textContent()).toContain('Consumer/Wall');
    await screenshot('messages');
  });

  it('shows WriteLog entries live, with level and package filters', async () => {
    await open('logs', 'Logs');
    expect(
      (await get(hub, 'platform/WriteLog', pkg('S1', 'P2'), { message: 'Boiler started', level: 'Warn' })).status,
    ).toBe(204);
    await page.getByText('Boiler started').waitFor();
    expect((await get(hub, 'platform/WriteLog', pkg('S1', 'P1'), { message: 'Lamp on' })).status).toBe(204);
    await page.getByText('Lamp on').waitFor();
    await page.getByLabel('Level').selectOption('Warn');
    await expect.poll(() => page.getByText('Lamp on').count()).toBe(0);
    expect(await page.getByText('Boiler started').count()).toBe(1);
    await page.getByLabel('Level').selectOption('');
    await screenshot('logs');
  });

  it('creates a credential whose key then works over HTTP', async () => {
    await open('credentials', 'Credentials');
    const form = page.getByRole('form', { name: 'New credential' });
    await form.getByLabel('Name').fill('Kitchen');
    await form.getByLabel('Access key (at least 8 characters)').fill('kitchen-key-0001');
    await form.getByRole('button', { name: 'Create credential' }).click();
    await page.getByRole('article', { name: 'Credential Kitchen' }).waitFor();
    expect((await get(hub, 'consumer/CheckAccess', consumer('Fridge', 'kitchen-key-0001'))).status).toBe(200);
    // A refusal from the hub is its own Message in an alert: a key too short.
    await form.getByLabel('Name').fill('Short');
    await form.getByLabel('Access key (at least 8 characters)').fill('short');
    await form.getByRole('button', { name: 'Create credential' }).click();
    expect(await form.getByRole('alert').textContent()).toContain(
      'The body is not valid: AccessKey must be at least 8 characters.',
    );
    await screenshot('credentials');
  });

  it('refuses invalid XML with the hub’s message and changes nothing', async () => {
    await open('configuration', 'Configuration');
    const editor = page.getByLabel('Configuration XML');
    await expect.poll(() => editor.inputValue()).toContain('<credential name="Kitchen"');
    const fileBefore = configFileText(hub);
    const appliedBefore = (await get(hub, 'management/configuration/applied', admin)).text;
    const text = await editor.inputValue();
    // Well-formed, but the sentinel names a credential that does not exist: only the hub can say so.
    await editor.fill(text.replace('<sentinel name="S1" credential="Dev"', '<sentinel name="S1" credential="Nobody"'));
    await page.getByText('+ ', { exact: false }).first().waitFor();
    await page.getByRole('button', { name: 'Save and reload' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/Nobody/);
    // Not well-formed: refused in the page before anything is posted.
    const posted = requests.length;
    await editor.fill('<hub><credentials></hub>');
    await page.getByRole('button', { name: 'Validate and save' }).click();
    await page
      .getByRole('alert')
      .getByText(/not well-formed/)
      .waitFor();
    expect(requests.slice(posted).filter((p) => p.endsWith('/configuration'))).toEqual([]);
    expect(configFileText(hub)).toBe(fileBefore);
    expect((await get(hub, 'management/configuration/applied', admin)).text).toBe(appliedBefore);
    await page.getByRole('button', { name: 'Discard changes' }).click();
    // The global recovery options, below the editor: applied at once.
    const recovery = page.getByRole('form', { name: 'Recovery options of every instance' });
    await recovery.getByLabel('Number of retries').fill('7');
    await recovery.getByRole('button', { name: 'Save recovery options' }).click();
    await expect
      .poll(
        async () =>
          (await get(hub, 'management/configuration/recoveryoptions', admin)).json<{ NumberOfRetry: number }>()
            .NumberOfRetry,
      )
      .toBe(7);
    await screenshot('configuration');
  });

  it('uploads packages with the file picker and by drag-and-drop, listing each with its icon', async () => {
    await open('repository', 'Repository');
    await page
      .getByLabel('Choose package files')
      .setInputFiles({ name: 'thermo-1.2.0.zip', mimeType: 'application/zip', buffer: thermoZip() });
    const card = page.getByRole('article', { name: 'Package Thermo' });
    await card.waitFor();
    const icon = card.getByRole('img', { name: 'Icon of Thermo' });
    await icon.waitFor();
    await expect.poll(() => icon.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBe(32);
    // Drag-and-drop: the same drop event a file dragged from the desktop fires.
    const base64 = thermoZip('Boiler').toString('base64');
    await page.evaluate(`(() => {
      const bytes = Uint8Array.from(atob(${JSON.stringify(base64)}), (c) => c.charCodeAt(0));
      const transfer = new DataTransfer();
      transfer.items.add(new File([bytes], 'boiler.zip', { type: 'application/zip' }));
      const zone = document.querySelector('.dropzone');
      zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: transfer, bubbles: true, cancelable: true }));
      zone.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
    })()`);
    await page.getByRole('article', { name: 'Package Boiler' }).getByRole('img', { name: 'Icon of Boiler' }).waitFor();
    // And from an address, as download-package does.
    const server = http.createServer((_, res) =>
      res.writeHead(200, { 'Content-Type': 'application/zip' }).end(thermoZip('Pump')),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      await page
        .getByLabel('Package address (http or https)')
        .fill(`http://127.0.0.1:${(server.address() as AddressInfo).port}/pump.zip`);
      await page.getByRole('button', { name: 'Download package' }).click();
      await page.getByRole('article', { name: 'Package Pump' }).waitFor();
    } finally {
      server.close();
    }
    const listed = (await get(hub, 'management/packages', admin)).json<{ Name: string }[]>().map((p) => p.Name);
    expect(listed.sort()).toEqual(['Boiler', 'Pump', 'Thermo']);
    await card.getByText('Settings (2)').click();
    await card.getByRole('button', { name: 'Show the XSD of Layout' }).click();
    await card.getByText('xs:element name="layout"', { exact: false }).waitFor();
    await screenshot('repository', { narrow: true });
  });

  it('shows the overview, the sentinels, and the server with its API reference', async () => {
    expect((await get(hub, 'platform/SubscribeToStateObjects', pkg('S1', 'P2'))).status).toBe(200);
    await open('overview', 'Overview');
    const s1 = page.getByRole('article', { name: 'Sentinel S1' });
    await s1.waitFor();
    const p1 = s1.getByRole('row').filter({ has: page.getByRole('rowheader', { name: /^P1/ }) });
    await expect.poll(() => p1.textContent()).toContain('● connected');
    expect(await p1.textContent()).toContain('Lamp on');
    await page.getByText(hub.services.version, { exact: true }).first().waitFor();
    await screenshot('overview', { narrow: true });
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot('overview-dark');
    await page.emulateMedia({ colorScheme: 'light' });

    await open('sentinels', 'Sentinels');
    const form = page.getByRole('form', { name: 'New sentinel' });
    await form.getByLabel('Sentinel name').fill('Garage');
    await form.getByRole('button', { name: 'Add sentinel' }).click();
    const garage = page.getByRole('article', { name: 'Sentinel Garage' });
    await garage.waitFor();
    await garage.getByLabel('Package instance name').fill('Door');
    await garage.getByLabel('Package file').selectOption('Thermo');
    await garage.getByRole('button', { name: 'Add package instance to Garage' }).click();
    await garage.getByText('package file Thermo').waitFor();
    const instances = (await get(hub, 'management/sentinels/Garage/packages', admin)).json<
      { Name: string; PackageFile: string }[]
    >();
    expect(instances).toMatchObject([{ Name: 'Door', PackageFile: 'Thermo' }]);
    // Edit the instance: its properties, and its settings as JSON (an object is stored as JSON content).
    await garage.getByText('Edit Garage/Door').click();
    const properties = garage.getByRole('form', { name: 'Properties of Garage/Door' });
    await properties.getByLabel('Enabled').uncheck();
    await properties.getByRole('button', { name: 'Save properties of Garage/Door' }).click();
    await expect
      .poll(
        async () =>
          (await get(hub, 'management/sentinels/Garage/packages/Door', admin)).json<{ Enable: boolean }>().Enable,
      )
      .toBe(false);
    const settings = garage.getByLabel('settings of Garage/Door');
    await expect.poll(() => settings.inputValue()).toBe('{}');
    await settings.fill('{"Interval": 30, "Rooms": {"Kitchen": 2}}');
    await garage.getByRole('button', { name: 'Save settings of Garage/Door' }).click();
    await garage.getByRole('status').getByText('Saved.').waitFor();
    expect((await get(hub, 'management/sentinels/Garage/packages/Door/settings', admin)).json()).toMatchObject({
      Interval: '30',
    });
    await screenshot('sentinels');

    await open('server', 'Server');
    await page.getByText('Community for Community').waitFor();
    await page.getByRole('heading', { name: /^API \(The hub/ }).waitFor();
    await page.getByText('management: Administration').click();
    await page.getByText('/rest/management/credentials/{credential}/authorizations').first().waitFor();
    await screenshot('server');
  });

  it('says it is reconnecting while the hub restarts, and recovers by itself', async () => {
    await open('stateobjects', 'StateObjects');
    const { dataDir, port } = hub;
    await hub.stop();
    const banner = page.getByRole('status').filter({ hasText: 'The hub cannot be reached: reconnecting…' });
    await banner.waitFor({ timeout: 15_000 });
    await screenshot('reconnecting');
    hub = await startTestHub({ dataDir, config: undefined, options: { port, authFailureStepMs: 0 } });
    await banner.waitFor({ state: 'detached', timeout: 15_000 });
    expect(
      (await get(hub, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'AfterRestart', value: 'back' })).status,
    ).toBe(204);
    await page.locator('tr[data-key="S1/P1/AfterRestart"]').waitFor({ timeout: 15_000 });
  });

  it('wrote nothing to the browser console but the refusals the tests asked for and the restart', async () => {
    // Chrome itself logs each refused request (403 wrong key, 400 invalid input) and each refused connection.
    const expected =
      /^error: Failed to load resource: (the server responded with a status of (400|403)|net::ERR_CONNECTION_REFUSED)/;
    expect(consoleOutput.filter((line) => !expected.test(line))).toEqual([]);
    expect(
      failures.filter(
        (line) => !/^(400 POST|403 GET \/rest\/management\/CheckAccess|failed net::ERR_CONNECTION_REFUSED)/.test(line),
      ),
    ).toEqual([]);
    expect((await call(hub, 'GET', 'management/CheckAccess', admin)).status).toBe(200);
  });

  it('signs out by itself, saying why, when its key stops being accepted', async () => {
    const credential = {
      Name: 'Admin',
      AccessKey: 'admin-key-0002',
      Enable: true,
      EnableManagementAPI: true,
      EnableControlHub: true,
    };
    expect((await post(hub, 'management/credentials', admin, credential)).status).toBe(200);
    await open('server', 'Server').catch(() => undefined);
    // The page that met the refusal may show it for a moment; then the sign-in form says why.
    await page.getByLabel('Access key').waitFor();
    const alert = page.getByRole('alert');
    expect(await alert.textContent()).toContain('The hub no longer accepts this access key');
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
  });
});

describe('the console under a listen prefix', () => {
  // `http://+:8088/constellation/` serves everything under /constellation/ (docs/configuration.md): the
  // same build must find its assets, the interfaces, /openapi.json and /ready there.
  it('follows the redirect from <prefix>/, signs in, shows a pushed StateObject live, and reconnects after a restart', async () => {
    let prefixed = await startTestHub({
      config: { ...testConfiguration(), listenUris: ['http://+:8088/constellation/'] },
      options: { authFailureStepMs: 0 },
    });
    const context = await browser.newContext({ viewport: WIDE });
    try {
      expect(prefixed.url).toMatch(/\/constellation$/);
      const tab = await context.newPage();
      tab.setDefaultTimeout(10_000);
      const problems: string[] = [];
      const paths: string[] = [];
      tab.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
      tab.on('request', (request) => paths.push(new URL(request.url()).pathname));
      tab.on('response', (response) => {
        if (response.status() >= 400) problems.push(`${response.status()} ${new URL(response.url()).pathname}`);
      });
      const response = await tab.goto(`${prefixed.url}/`);
      expect(response?.url()).toBe(`${prefixed.url}/console/`);
      await tab.getByLabel('Access key').fill(ADMIN_KEY);
      await tab.getByRole('button', { name: 'Sign in' }).click();
      await tab
        .getByRole('navigation', { name: 'Pages' })
        .getByRole('link', { name: 'StateObjects', exact: true })
        .click();
      await tab.getByRole('heading', { level: 1, name: 'StateObjects', exact: true }).waitFor();
      expect(
        (await get(prefixed, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'Prefixed', value: 42 })).status,
      ).toBe(204);
      await tab.locator('tr[data-key="S1/P1/Prefixed"]').getByText('42', { exact: true }).waitFor();
      // The API reference comes from <prefix>/openapi.json.
      await tab.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Server', exact: true }).click();
      await tab.getByRole('heading', { name: /^API \(The hub/ }).waitFor();
      // Reconnecting asks <prefix>/ready: a hub back on the same port is found again.
      await tab
        .getByRole('navigation', { name: 'Pages' })
        .getByRole('link', { name: 'StateObjects', exact: true })
        .click();
      await tab.getByRole('heading', { level: 1, name: 'StateObjects', exact: true }).waitFor();
      const { dataDir, port } = prefixed;
      await prefixed.stop();
      const banner = tab.getByRole('status').filter({ hasText: 'The hub cannot be reached: reconnecting…' });
      await banner.waitFor({ timeout: 15_000 });
      prefixed = await startTestHub({ dataDir, config: undefined, options: { port, authFailureStepMs: 0 } });
      await banner.waitFor({ state: 'detached', timeout: 15_000 });
      expect(
        (await get(prefixed, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'AfterRestart', value: 'back' }))
          .status,
      ).toBe(204);
      await tab.locator('tr[data-key="S1/P1/AfterRestart"]').waitFor({ timeout: 15_000 });
      expect(problems).toEqual([]);
      expect(paths.filter((p) => !p.startsWith('/constellation/'))).toEqual([]);
      expect(paths).toEqual(expect.arrayContaining(['/constellation/openapi.json', '/constellation/ready']));
    } finally {
      await context.close();
      await prefixed.stop();
    }
  });
});
