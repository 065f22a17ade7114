/**
 * ConstellationHub: a clean-room client speaking as .NET PackageHost does (protocol 1.4, identity in
 * headers, WebSockets and long polling) against a real hub, both ways with REST clients.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { MessageRecord, StateObjectRecord } from '../src/hub/records.js';
import { RawSignalRClient } from './support/signalrClient.js';
import { admin, consumer, DEV_KEY, get, hubsStoppedAfterEach, idOf, pkg, post } from './support/testHub.js';
import { until } from './support/until.js';

const hub = hubsStoppedAfterEach();
const clients: RawSignalRClient[] = [];
afterEach(() => clients.splice(0).forEach((c) => c.close()));

function packageHost(url: string, sentinel = 'S1', name = 'P1', key = DEV_KEY, extra: Record<string, string> = {}) {
  const client = new RawSignalRClient(
    url,
    { SentinelName: sentinel, PackageName: name, AccessKey: key, PackageVersion: '1.0', ...extra },
    ['ConstellationHub'],
    '1.4',
  );
  clients.push(client);
  return client;
}

async function connect(client: RawSignalRClient, transport: 'webSockets' | 'longPolling') {
  const negotiated = await client.negotiate();
  expect(negotiated.ProtocolVersion).toBe('1.4');
  if (transport === 'webSockets') await client.openSocket();
  else {
    await client.connectLongPolling();
    client.startPolling();
  }
  expect(await client.start(transport)).toEqual({ Response: 'started' });
}

describe.each(['webSockets', 'longPolling'] as const)('a package over %s', (transport) => {
  it('gets its own StateObjects on connect (not on a reconnection), settings, and acts as its instance', async () => {
    const h = await hub();
    expect((await post(h, 'platform/PushStateObject', pkg('S1', 'P1'), { Name: 'Mine', Value: 1 })).status).toBe(204);
    expect((await post(h, 'platform/PushStateObject', pkg('S1', 'P2'), { Name: 'NotMine', Value: 2 })).status).toBe(
      204,
    );
    const client = packageHost(h.url);
    await connect(client, transport);
    await until(() => client.of('ReceiveLastStateObjects').length === 1);
    const [[own]] = client.of('ReceiveLastStateObjects') as [[StateObjectRecord[]]];
    expect(own.map((so) => so.Name)).toEqual(['Mine']);

    expect(await client.invoke('ConstellationHub', 'RequestSettings')).toEqual({ I: '0' });
    await until(() => client.of('UpdateSettings').length === 1);
    expect(client.of('UpdateSettings')[0][0]).toEqual({});

    expect(
      (await client.invoke('constellationhub', 'pushstateobject', 'Temp', { C: 20 }, 'Temperature', { Unit: 'C' }, 60))
        .E,
    ).toBeUndefined();
    const objects = (
      await get(h, 'consumer/RequestStateObjects', consumer(), { sentinel: 'S1', package: 'P1', name: 'Temp' })
    ).json<StateObjectRecord[]>();
    expect(objects).toMatchObject([
      { Name: 'Temp', Value: { C: 20 }, Type: 'Temperature', Metadatas: { Unit: 'C' }, Lifetime: 60 },
    ]);

    expect((await client.invoke('ConstellationHub', 'WriteLog', 'Hello from the hub', 2)).E).toBeUndefined();
    const logs = (await get(h, 'management/logs', admin)).json<
      { Message: string; Level: string; PackageName: string }[]
    >();
    expect(logs.some((l) => l.Message === 'Hello from the hub' && l.Level === 'Warn' && l.PackageName === 'P1')).toBe(
      true,
    );

    const descriptor = { PackageName: 'P1', MessageCallbacks: [], StateObjectTypes: [] };
    const declared = await client.invoke('ConstellationHub', 'DeclarePackageDescriptor', descriptor);
    expect(declared.E).toBeUndefined();
    const read = await get(h, 'management/sentinels/S1/packages/P1/descriptor', admin);
    expect(read.status, read.text).toBe(200);

    expect((await client.invoke('ConstellationHub', 'PurgeStateObjects', 'Temp', '*')).E).toBeUndefined();
    const left = (await get(h, 'consumer/RequestStateObjects', consumer(), { sentinel: 'S1', package: 'P1' })).json<
      StateObjectRecord[]
    >();
    expect(left.map((so) => so.Name)).toEqual(['Mine']);

    // PackageHost starting again after a loss says so: no ReceiveLastStateObjects then.
    const again = packageHost(h.url, 'S1', 'P1', DEV_KEY, { IsReconnection: 'true' });
    await connect(again, transport);
    await again.invoke('ConstellationHub', 'RequestSettings');
    await until(() => again.of('UpdateSettings').length === 1);
    expect(again.of('ReceiveLastStateObjects')).toEqual([]);
  });

  it('receives messages sent to its instance and answers a saga over REST', async () => {
    const h = await hub();
    const client = packageHost(h.url);
    await connect(client, transport);
    const asker = consumer('Asker');
    const asking = idOf(await get(h, 'consumer/SubscribeToMessage', asker));
    const sent = await post(h, 'consumer/SendMessage', asker, {
      Scope: { Scope: 'Package', Args: ['S1/P1'], SagaId: 'saga-1' },
      Key: 'Ask',
      Data: 1,
    });
    expect(sent.status).toBe(204);
    await until(() => client.of('ReceiveMessage').length === 1);
    const [[request]] = client.of('ReceiveMessage') as [[MessageRecord]];
    expect(request).toMatchObject({ Key: 'Ask', Data: 1, Sender: { Type: 2, FriendlyName: 'Consumer/Asker' } });
    // As PackageHost answers: Package scope to the sender's friendly name (REST sender), Scope as an int.
    const answered = await client.invoke(
      'ConstellationHub',
      'SendMessage',
      { Scope: 2, Args: [request.Sender.FriendlyName], SagaId: 'saga-1' },
      '__Response',
      2,
    );
    expect(answered.E).toBeUndefined();
    const reply = (await get(h, 'consumer/GetMessages', asker, { subscriptionId: asking, timeout: 10_000 })).json<
      MessageRecord[]
    >();
    expect(reply).toMatchObject([{ Key: '__Response', Data: 2, Sender: { Type: 1, FriendlyName: 'S1/P1' } }]);
  });

  it('gets UpdateSettings again when an administrator changes its settings', async () => {
    const h = await hub();
    const client = packageHost(h.url);
    await connect(client, transport);
    await client.invoke('ConstellationHub', 'RequestSettings');
    await until(() => client.of('UpdateSettings').length === 1);
    const set = await post(h, 'management/sentinels/S1/packages/P1/settings', admin, { Mode: 'eco' });
    expect(set.status, set.text).toBeLessThan(300);
    await until(() => client.of('UpdateSettings').length === 2);
    expect(client.of('UpdateSettings')[1][0]).toMatchObject({ Mode: 'eco' });
    // A change elsewhere in the configuration sends nothing more.
    expect((await post(h, 'management/sentinels/S1/packages/P2/settings', admin, { Other: '1' })).status).toBeLessThan(
      300,
    );
    const reload = await get(h, 'management/configuration/reload', admin, { deployConfiguration: 'true' });
    expect(reload.status, reload.text).toBeLessThan(300);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(client.of('UpdateSettings')).toHaveLength(2);
    expect(client.of('ReceiveMessage')).toEqual([]);
  });
});

describe('ConstellationHub admission', () => {
  it('admits a package as the platform interface does, and refuses the rest at negotiate', async () => {
    const h = await hub();
    expect(await packageHost(h.url).negotiate()).toMatchObject({ ProtocolVersion: '1.4' });
    for (const [sentinel, name, key] of [
      ['S1', 'P1', 'wrong-key-0001'],
      ['S1', 'Unknown', DEV_KEY],
      ['S2', 'P1', DEV_KEY],
    ]) {
      const refused = await packageHost(h.url, sentinel, name, key).request('negotiate');
      expect(refused.status, refused.text).toBe(403);
      expect(refused.json()).toMatchObject({ Code: 'AccessDenied' });
    }
    const consumerOnPackageHub = new RawSignalRClient(
      h.url,
      { SentinelName: 'Consumer', PackageName: 'X', AccessKey: DEV_KEY },
      ['ConstellationHub'],
    );
    const refused = await consumerOnPackageHub.request('negotiate');
    expect(refused.status).toBe(403);
    expect(refused.json()).toMatchObject({ Code: 'SignalRHubNotAllowed' });
  });
});
