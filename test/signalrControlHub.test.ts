/**
 * ControlHub as Constellation's control pages use it (SentinelName=Controller, a credential with the
 * control-hub right), in a jsdom page with npm's SignalR client, against REST packages and a
 * header-identified package on ConstellationHub.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { MessageRecord, StateObjectRecord } from '../src/hub/records.js';
import { RawSignalRClient } from './support/signalrClient.js';
import type { Transport } from './support/signalrPage.js';
import { SignalRPage } from './support/signalrPage.js';
import { ADMIN_KEY, consumer, DEV_KEY, get, hubsStoppedAfterEach, idOf, pkg, post } from './support/testHub.js';
import { until } from './support/until.js';

const hub = hubsStoppedAfterEach();
const closers: { close(): void }[] = [];
afterEach(() => closers.splice(0).forEach((c) => c.close()));

const CALLBACKS = [
  'receiveLog',
  'updateSentinelsList',
  'updateSentinel',
  'updatePackageList',
  'updatePackageDescriptor',
];

function controlPage(url: string, key = ADMIN_KEY): SignalRPage {
  const page = new SignalRPage(
    `${url}/`,
    { SentinelName: 'Controller', PackageName: 'Console', AccessKey: key },
    { controlHub: CALLBACKS },
  );
  closers.push(page);
  return page;
}

describe.each(['longPolling', 'webSockets'] as Transport[])('ControlHub over %s', (transport) => {
  it('lists sentinels and packages, follows the logs, purges, and controls a package', async () => {
    const h = await hub();
    const packageHost = new RawSignalRClient(h.url, { SentinelName: 'S1', PackageName: 'P1', AccessKey: DEV_KEY }, [
      'ConstellationHub',
    ]);
    closers.push(packageHost);
    await packageHost.negotiate();
    await packageHost.openSocket();
    await packageHost.start('webSockets');

    const page = controlPage(h.url);
    await page.start(transport);
    await page.invoke('controlHub', 'AddToControlGroup', 'PackagesLog');
    expect((await get(h, 'platform/WriteLog', pkg('S1', 'P2'), { message: 'Started', level: 'Warn' })).status).toBe(
      204,
    );
    await until(() => page.of('receiveLog').length === 1);
    expect(page.of('receiveLog')[0]).toMatchObject({
      SentinelName: 'S1',
      PackageName: 'P2',
      Message: 'Started',
      Level: 'Warn',
    });

    await page.invoke('controlHub', 'RequestSentinelsList');
    await until(() => page.of('updateSentinelsList').length === 1);
    expect(page.of('updateSentinelsList')[0]).toEqual([
      { Description: { SentinelName: 'S1' }, IsConnected: true },
      { Description: { SentinelName: 'S2' }, IsConnected: false },
    ]);
    await page.invoke('controlHub', 'RequestPackagesList', 'S1');
    await until(() => page.of('updatePackageList').length === 1);
    expect(page.of('updatePackageList')[0]).toMatchObject({
      SentinelName: 'S1',
      List: [
        { Package: { Name: 'P1' }, State: 'Started', IsConnected: true },
        { Package: { Name: 'P2' }, State: 'Stopped', IsConnected: false },
      ],
    });

    const descriptor = { PackageName: 'P1', MessageCallbacks: [], StateObjectTypes: [] };
    expect((await post(h, 'platform/DeclarePackageDescriptor', pkg('S1', 'P1'), descriptor)).status).toBe(204);
    await page.invoke('controlHub', 'RequestPackageDescriptor', 'P1');
    await until(() => page.of('updatePackageDescriptor').length === 1);
    expect(page.of('updatePackageDescriptor')[0]).toMatchObject({
      PackageName: 'P1',
      Descriptor: { PackageName: 'P1' },
    });

    expect((await post(h, 'platform/PushStateObject', pkg('S1', 'P1'), { Name: 'Gone', Value: 1 })).status).toBe(204);
    expect(await page.invoke('controlHub', 'PurgeStateObjects', 'S1', 'P1', '*', '*')).toBe(1);
    expect(
      (await get(h, 'consumer/RequestStateObjects', consumer(), { sentinel: 'S1' })).json<StateObjectRecord[]>(),
    ).toEqual([]);

    // Restart reaches the hub package as PackageControlAction(2) and a REST package as a message.
    const restP2 = idOf(await get(h, 'platform/SubscribeToMessage', pkg('S1', 'P2')));
    await page.invoke('controlHub', 'Restart', 'S1', 'P1');
    await page.invoke('controlHub', 'Stop', 'S1', 'P2');
    await until(() => packageHost.of('PackageControlAction').length === 1);
    expect(packageHost.of('PackageControlAction')[0]).toEqual([2]);
    const stop = (
      await get(h, 'platform/GetMessages', pkg('S1', 'P2'), { subscriptionId: restP2, timeout: 10_000 })
    ).json<MessageRecord[]>();
    expect(stop).toMatchObject([{ Key: '__PackageControlAction', Data: 1 }]);

    await page.invoke('controlHub', 'UpdatePackageSettings', 'S1', 'P2');
    const settings = (
      await get(h, 'platform/GetMessages', pkg('S1', 'P2'), { subscriptionId: restP2, timeout: 10_000 })
    ).json<MessageRecord[]>();
    expect(settings).toMatchObject([{ Key: '__SettingsUpdated', Data: {} }]);

    expect(await page.invoke('controlHub', 'ReloadServerConfiguration', false)).toBe(false);
    await expect(page.invoke('controlHub', 'AddToControlGroup', 'NoSuchGroup')).rejects.toThrow(
      /control group must be/,
    );
    await expect(page.invoke('controlHub', 'Start', 'S1', 'Nope')).rejects.toThrow(/does not exist|not found/i);
  });
});

describe('ControlHub admission', () => {
  it('needs the control-hub right', async () => {
    const h = await hub();
    const refused = new RawSignalRClient(h.url, { SentinelName: 'Controller', PackageName: 'X', AccessKey: DEV_KEY }, [
      'ControlHub',
    ]);
    const reply = await refused.request('negotiate');
    expect(reply.status).toBe(403);
    expect(reply.json()).toMatchObject({ Code: 'SignalRHubNotAllowed' });
    const wrongKey = new RawSignalRClient(
      h.url,
      { SentinelName: 'Controller', PackageName: 'X', AccessKey: 'nope-0001' },
      ['ControlHub'],
    );
    expect((await wrongKey.request('negotiate')).status).toBe(403);
  });
});
