import { describe, expect, it } from 'vitest';
import type { MessageRecord } from '../src/hub/records.js';
import {
  admin,
  consumer,
  get,
  idOf,
  instance,
  pkg,
  post,
  testConfiguration,
  hubsStoppedAfterEach,
} from './support/testHub.js';
import { waitingPolls } from './support/waitingPolls.js';
import { until } from './support/until.js';

const hub = hubsStoppedAfterEach();

const p1 = pkg('S1', 'P1');
interface Log {
  Id: number;
  SentinelName: string;
  PackageName: string;
  Level: string;
  Message: string;
  Date: string;
}

describe('WriteLog', () => {
  it('persists logs with sentinel, package, level and time, filterable by management', async () => {
    const h = await hub();
    const before = Date.now();
    expect((await get(h, 'platform/WriteLog', p1, { message: 'started' })).status).toBe(204);
    await get(h, 'platform/WriteLog', p1, { message: 'hot', level: 'warn' });
    await get(h, 'platform/WriteLog', pkg('S1', 'P2'), { message: 'broken', level: 'Error' });
    const all = (await get(h, 'management/logs', admin)).json<Log[]>();
    expect(all.map((l) => [l.PackageName, l.Level, l.Message])).toEqual([
      ['P1', 'Info', 'started'],
      ['P1', 'Warn', 'hot'],
      ['P2', 'Error', 'broken'],
    ]);
    // Stamped when written (a second's leeway for a stamp without milliseconds).
    expect(Date.parse(all[0].Date)).toBeGreaterThanOrEqual(before - 1000);
    expect(
      (await get(h, 'management/logs', admin, { package: 'P1', level: 'Warn' })).json<Log[]>().map((l) => l.Message),
    ).toEqual(['hot']);
    expect((await get(h, 'management/logs', admin, { limit: 1 })).json<Log[]>().map((l) => l.Message)).toEqual([
      'broken',
    ]);
    expect(
      (await get(h, 'management/logs', admin, { since: new Date(Date.now() + 60_000).toISOString() })).json(),
    ).toEqual([]);
  });

  it('refuses a missing message and an unknown level, and is not on the consumer interface', async () => {
    const h = await hub();
    expect((await get(h, 'platform/WriteLog', p1, {})).status).toBe(400);
    const bad = await get(h, 'platform/WriteLog', p1, { message: 'x', level: 'Debug' });
    expect(bad.status).toBe(400);
    expect(bad.json<{ Message: string }>().Message).toMatch(/Info, Warn or Error/);
    expect((await get(h, 'consumer/WriteLog', consumer(), { message: 'x' })).status).toBe(404);
    expect((await get(h, 'consumer/GetSettings', consumer())).status).toBe(404);
    expect((await post(h, 'consumer/DeclarePackageDescriptor', consumer(), { PackageName: 'x' })).status).toBe(404);
    expect((await get(h, 'management/logs', admin)).json()).toEqual([]);
  });

  it('lets a console follow logs live by long-polling after the last Id', async () => {
    const h = await hub();
    await get(h, 'platform/WriteLog', p1, { message: 'old' });
    const [last] = (await get(h, 'management/logs', admin)).json<Log[]>();
    const following = get(h, 'management/logs', admin, { after: last.Id, timeout: 5000 });
    await waitingPolls(h, 1);
    await get(h, 'platform/WriteLog', p1, { message: 'new' });
    expect((await following).json<Log[]>().map((l) => l.Message)).toEqual(['new']);
  });

  it('keeps only the newest entries within the retention', async () => {
    const h = await hub({ options: { logRetention: 3, sweepIntervalMs: 100 } });
    for (let i = 1; i <= 6; i++) await get(h, 'platform/WriteLog', p1, { message: `m${i}` });
    // Until a sweep (every 100 ms) has run.
    const messages = async () => (await get(h, 'management/logs', admin)).json<Log[]>().map((l) => l.Message);
    await until(async () => (await messages()).length <= 3);
    expect(await messages()).toEqual(['m4', 'm5', 'm6']);
  });
});

describe('GetSettings', () => {
  function configWithSettings() {
    const config = testConfiguration();
    config.settingsGroups = [
      {
        name: 'Base',
        settings: [
          { key: 'Unit', kind: 'value', value: 'C' },
          { key: 'Interval', kind: 'value', value: '60' },
          { key: 'Mode', kind: 'value', value: 'base' },
        ],
      },
      {
        name: 'Fast',
        settings: [
          { key: 'Interval', kind: 'value', value: '5' },
          { key: 'Mode', kind: 'value', value: 'fast' },
        ],
      },
    ];
    config.sentinels[0].packages[0] = instance('P1', {
      imports: ['Base', 'Fast'],
      settings: [
        { key: 'Mode', kind: 'value', value: 'own' },
        { key: 'Json', kind: 'content', value: '{"rooms":["a","b"]}' },
        { key: 'Xml', kind: 'content', value: '<rooms><room name="a"/></rooms>' },
      ],
    });
    return config;
  }

  it('resolves imports in order and lets the package’s own value win; content comes as strings', async () => {
    const h = await hub({ config: configWithSettings() });
    expect((await get(h, 'platform/GetSettings', p1)).json()).toEqual({
      Unit: 'C',
      Interval: '5',
      Mode: 'own',
      Json: '{"rooms":["a","b"]}',
      Xml: '<rooms><room name="a"/></rooms>',
    });
    expect((await get(h, 'platform/GetSettings', pkg('S1', 'P2'))).json()).toEqual({});
  });

  it('reflects a management change at once', async () => {
    const h = await hub({ config: configWithSettings() });
    const reply = await post(h, 'management/sentinels/S1/packages/P1/settings', admin, {
      Mode: 'managed',
      Limits: { max: 3 },
    });
    expect(reply.status).toBe(200);
    expect((await get(h, 'platform/GetSettings', p1)).json()).toEqual({
      Unit: 'C',
      Interval: '5',
      Mode: 'managed',
      Limits: '{"max":3}',
    });
  });
});

describe('DeclarePackageDescriptor', () => {
  const descriptor = {
    PackageName: 'P1',
    MessageCallbacks: [
      {
        MessageKey: 'SetLight',
        Description: 'Switches a light',
        ResponseType: null,
        Parameters: [
          { Name: 'room', TypeName: 'System.String', Type: 2 },
          { Name: 'on', TypeName: 'System.Boolean', Type: 2, IsOptional: true, DefaultValue: true },
        ],
      },
    ],
    MessageCallbackTypes: [
      {
        TypeName: 'Color',
        TypeFullname: 'Demo.Color',
        IsEnum: true,
        EnumValues: [{ Name: 'Red', TypeName: 'System.Int32', Type: 0 }],
      },
    ],
    StateObjectTypes: [
      {
        TypeName: 'Reading',
        TypeFullname: 'Demo.Reading',
        Properties: [{ Name: 'Value', TypeName: 'System.Double', Type: 1 }],
      },
      {
        TypeName: 'List',
        TypeFullname: 'System.Collections.Generic.List',
        IsGeneric: true,
        GenericParameters: ['Demo.Reading'],
      },
    ],
  };

  it('stores the descriptor per instance; management reads it back; a later one replaces it', async () => {
    const h = await hub();
    expect((await get(h, 'management/sentinels/S1/packages/P1/descriptor', admin)).status).toBe(404);
    expect((await post(h, 'platform/DeclarePackageDescriptor', p1, descriptor)).status).toBe(204);
    expect((await get(h, 'management/sentinels/S1/packages/P1/descriptor', admin)).json()).toEqual(descriptor);
    await post(h, 'platform/DeclarePackageDescriptor', p1, { PackageName: 'P1', MessageCallbacks: [] });
    expect((await get(h, 'management/sentinels/S1/packages/P1/descriptor', admin)).json()).toEqual({
      PackageName: 'P1',
      MessageCallbacks: [],
    });
  });

  it.each([
    ['a missing PackageName', { MessageCallbacks: [] }, /PackageName/],
    [
      'a MessageCallback without key',
      { PackageName: 'P', MessageCallbacks: [{ Description: 'x' }] },
      /MessageCallbacks\.0\.MessageKey/,
    ],
    [
      'a parameter of the wrong Type',
      {
        PackageName: 'P',
        MessageCallbacks: [{ MessageKey: 'K', Parameters: [{ Name: 'a', TypeName: 'System.Int32', Type: 1 }] }],
      },
      /MessageCallbacks\.0\.Parameters\.0\.Type must be 2/,
    ],
    [
      'an unknown Type number',
      {
        PackageName: 'P',
        MessageCallbacks: [{ MessageKey: 'K', Parameters: [{ Name: 'a', TypeName: 'x', Type: 7 }] }],
      },
      /Parameters\.0\.Type/,
    ],
    [
      'a parameter without TypeName',
      { PackageName: 'P', MessageCallbacks: [{ MessageKey: 'K', Parameters: [{ Name: 'a', Type: 2 }] }] },
      /Parameters\.0\.TypeName/,
    ],
    [
      'an enum without values',
      { PackageName: 'P', StateObjectTypes: [{ TypeName: 'E', TypeFullname: 'X.E', IsEnum: true }] },
      /StateObjectTypes\.0\.EnumValues/,
    ],
    [
      'an enum value marked as property',
      {
        PackageName: 'P',
        StateObjectTypes: [
          {
            TypeName: 'E',
            TypeFullname: 'X.E',
            IsEnum: true,
            EnumValues: [{ Name: 'A', TypeName: 'System.Int32', Type: 1 }],
          },
        ],
      },
      /EnumValues\.0\.Type must be 0/,
    ],
    [
      'a generic without parameters',
      { PackageName: 'P', MessageCallbackTypes: [{ TypeName: 'L', TypeFullname: 'X.L', IsGeneric: true }] },
      /MessageCallbackTypes\.0\.GenericParameters/,
    ],
    [
      'a type without TypeFullname',
      { PackageName: 'P', StateObjectTypes: [{ TypeName: 'T' }] },
      /StateObjectTypes\.0\.TypeFullname/,
    ],
    ['callbacks that are not a list', { PackageName: 'P', MessageCallbacks: {} }, /MessageCallbacks/],
  ])('refuses %s with the path of the problem', async (_what, body, message) => {
    const h = await hub();
    const reply = await post(h, 'platform/DeclarePackageDescriptor', p1, body);
    expect(reply.status).toBe(400);
    expect(reply.json<{ Message: string }>().Message).toMatch(message);
    expect((await get(h, 'management/sentinels/S1/packages/P1/descriptor', admin)).status).toBe(404);
  });
});

describe('deploy', () => {
  it('sends __SettingsUpdated to each instance whose settings changed on reload with deployConfiguration', async () => {
    const h = await hub();
    const id = idOf(await get(h, 'platform/SubscribeToMessage', p1));
    const p2 = pkg('S1', 'P2');
    const p2Sub = idOf(await get(h, 'platform/SubscribeToMessage', p2));
    const xml = (await get(h, 'management/configuration', admin)).text;
    const edited = xml.replace(
      /(<sentinel name="S1"[\s\S]*?<package name="P1"[^>]*>)/,
      '$1<settings><setting key="Color" value="red"/></settings>',
    );
    expect(edited).not.toBe(xml);
    expect((await post(h, 'management/configuration', admin, edited, 'application/xml')).status).toBe(204);
    expect((await get(h, 'platform/GetSettings', p1)).json()).toEqual({});
    const reload = await get(h, 'management/configuration/reload', admin, { deployConfiguration: 'true' });
    expect(reload.json()).toEqual({ DeployedTo: ['S1/P1'] });
    expect((await get(h, 'platform/GetSettings', p1)).json()).toEqual({ Color: 'red' });
    const messages = (await get(h, 'platform/GetMessages', p1, { subscriptionId: id, timeout: 0 })).json<
      MessageRecord[]
    >();
    expect(messages).toEqual([expect.objectContaining({ Key: '__SettingsUpdated', Data: { Color: 'red' } })]);
    expect((await get(h, 'platform/GetMessages', p2, { subscriptionId: p2Sub, timeout: 0 })).json()).toEqual([]);
  });
});
