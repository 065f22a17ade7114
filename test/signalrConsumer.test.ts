/**
 * ConsumerHub over ASP.NET SignalR 2, driven by npm's jQuery SignalR clients (2.2.3 and 2.4.3) in a
 * jsdom page on another origin, against a real hub on an ephemeral port, both ways with REST clients.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { MessageRecord, StateObjectRecord } from '../src/hub/records.js';
import type { ClientVersion, Transport } from './support/signalrPage.js';
import { SignalRPage } from './support/signalrPage.js';
import { consumer, DEV_KEY, get, hubsStoppedAfterEach, idOf, pkg, post } from './support/testHub.js';
import { until } from './support/until.js';

const hub = hubsStoppedAfterEach();
const pages: SignalRPage[] = [];
afterEach(() => pages.splice(0).forEach((p) => p.close()));

const CONSUMER_CALLBACKS = { consumerHub: ['updateStateObject', 'receiveMessage'] };

function page(url: string, version: ClientVersion, name = 'Page'): SignalRPage {
  const p = new SignalRPage(
    `${url}/`,
    { SentinelName: 'Consumer', PackageName: name, AccessKey: DEV_KEY },
    CONSUMER_CALLBACKS,
    version,
  );
  pages.push(p);
  return p;
}

const cases: [ClientVersion, Transport][] = [
  ['2.2', 'longPolling'],
  ['2.2', 'webSockets'],
  ['2.4', 'longPolling'],
  ['2.4', 'webSockets'],
];

describe.each(cases)('signalr %s over %s, page on another origin', (version, transport) => {
  it('requests and subscribes to StateObjects that REST packages push', async () => {
    const h = await hub();
    const p1 = pkg('S1', 'P1');
    expect((await post(h, 'platform/PushStateObject', p1, { Name: 'Temperature', Value: 21.5 })).status).toBe(204);
    const p = page(h.url, version);
    await p.start(transport);
    expect(p.transportName).toBe(transport);
    await p.invoke('consumerHub', 'RequestStateObjects', 'S1', 'P1', 'Temperature', '*');
    await until(() => p.of('updateStateObject').length === 1);
    expect(p.of<StateObjectRecord>('updateStateObject')[0]).toMatchObject({
      SentinelName: 'S1',
      Name: 'Temperature',
      Value: 21.5,
    });

    await p.invoke('consumerHub', 'SubscribeStateObjects', 'S1', 'P1', 'Hum*', '*');
    expect((await post(h, 'platform/PushStateObject', p1, { Name: 'Humidity', Value: 40 })).status).toBe(204);
    expect((await post(h, 'platform/PushStateObject', p1, { Name: 'Ignored', Value: 1 })).status).toBe(204);
    expect((await post(h, 'platform/PushStateObject', p1, { Name: 'Humidity', Value: 41 })).status).toBe(204);
    await until(() => p.of<StateObjectRecord>('updateStateObject').some((so) => so.Value === 41));
    const names = p.of<StateObjectRecord>('updateStateObject').map((so) => `${so.Name}=${String(so.Value)}`);
    expect(names[0]).toBe('Temperature=21.5');
    expect(names).not.toContain('Ignored=1');
    expect(names.at(-1)).toBe('Humidity=41');
  });

  it('sends messages REST long-pollers receive, and receives what REST clients send', async () => {
    const h = await hub();
    const listener = consumer('Listener');
    const subscription = idOf(await get(h, 'consumer/SubscribeToMessageGroup', listener, { group: 'Lights' }));
    const p = page(h.url, version);
    await p.start(transport);
    await p.invoke('consumerHub', 'SubscribeMessages', 'Kitchen');

    const polled = get(h, 'consumer/GetMessages', listener, { subscriptionId: subscription, timeout: 60_000 });
    await p.invoke('consumerHub', 'SendMessage', { Scope: 'Group', Args: ['Lights'] }, 'TurnOn', [1, 'on']);
    const reply = await polled;
    expect(reply.status).toBe(200);
    const [message] = reply.json<MessageRecord[]>();
    expect(message).toMatchObject({ Key: 'TurnOn', Data: [1, 'on'], Scope: { Scope: 1, Args: ['Lights'] } });
    expect(message.Sender).toMatchObject({ Type: 0, FriendlyName: 'Consumer/Page' });

    const sent = await post(h, 'consumer/SendMessage', listener, {
      Scope: { Scope: 'Group', Args: ['Kitchen'] },
      Key: 'Hello',
      Data: 'world',
    });
    expect(sent.status).toBe(204);
    await until(() => p.of('receiveMessage').length === 1);
    expect(p.of<MessageRecord>('receiveMessage')[0]).toMatchObject({
      Key: 'Hello',
      Data: 'world',
      Sender: { Type: 2 },
    });
  });

  it('stops what it unsubscribes from, and only that', async () => {
    const h = await hub();
    const p1 = pkg('S1', 'P1');
    const p = page(h.url, version);
    await p.start(transport);
    await p.invoke('consumerHub', 'SubscribeStateObjects', 'S1', 'P1', 'Kept', '*');
    await p.invoke('consumerHub', 'SubscribeStateObjects', 'S1', 'P1', 'Dropped', '*');
    await p.invoke('consumerHub', 'SubscribeMessages', 'KeptGroup');
    await p.invoke('consumerHub', 'SubscribeMessages', 'DroppedGroup');
    await p.invoke('consumerHub', 'UnSubscribeStateObjects', 'S1', 'P1', 'Dropped', '*');
    await p.invoke('consumerHub', 'UnSubscribeMessages', 'DroppedGroup');
    const sender = consumer('Sender');
    for (const group of ['DroppedGroup', 'KeptGroup']) {
      const sent = await post(h, 'consumer/SendMessage', sender, {
        Scope: { Scope: 'Group', Args: [group] },
        Key: group,
        Data: 1,
      });
      expect(sent.status).toBe(204);
    }
    for (const name of ['Dropped', 'Kept']) {
      expect((await post(h, 'platform/PushStateObject', p1, { Name: name, Value: 1 })).status).toBe(204);
    }
    await until(() => p.of('receiveMessage').length === 1 && p.of('updateStateObject').length === 1);
    // Anything more would have come before these: the marker sent last arrives after them.
    expect(
      (await post(h, 'consumer/SendMessage', sender, { Scope: { Scope: 'All' }, Key: 'Marker', Data: 1 })).status,
    ).toBe(204);
    await until(() => p.of('receiveMessage').length === 2);
    expect(p.of<MessageRecord>('receiveMessage').map((m) => m.Key)).toEqual(['KeptGroup', 'Marker']);
    expect(p.of<StateObjectRecord>('updateStateObject').map((so) => so.Name)).toEqual(['Kept']);
  });

  it('gets the saga reply a package sends to its connection id', async () => {
    const h = await hub();
    const p1 = pkg('S1', 'P1');
    const packageSubscription = idOf(await get(h, 'platform/SubscribeToMessage', p1));
    const p = page(h.url, version);
    await p.start(transport);
    const sagaId = Date.now() + Math.random() * 1000;
    const polled = get(h, 'platform/GetMessages', p1, { subscriptionId: packageSubscription, timeout: 60_000 });
    await p.invoke('consumerHub', 'SendMessage', { Scope: 'Package', Args: ['S1/P1'], SagaId: sagaId }, 'Ask', 6);
    const [request] = (await polled).json<MessageRecord[]>();
    expect(request.Scope.SagaId).toBe(String(sagaId));
    // As a .NET package answers a hub consumer: Package scope, its connection id, the SagaId copied.
    const reply = await post(h, 'platform/SendMessage', p1, {
      Scope: { Scope: 'Package', Args: [request.Sender.ConnectionId], SagaId: request.Scope.SagaId },
      Key: '__Response',
      Data: 42,
    });
    expect(reply.status, reply.text).toBe(204);
    await until(() => p.of('receiveMessage').length === 1);
    const [answer] = p.of<MessageRecord>('receiveMessage');
    expect(answer.Data).toBe(42);
    // Pages match the reply with ==.
    expect(answer.Scope.SagaId == String(sagaId)).toBe(true);
  });
});
