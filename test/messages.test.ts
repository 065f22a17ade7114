import { describe, expect, it } from 'vitest';
import { sqliteDatabaseOf } from '../src/store/index.js';
import type { Identity } from './support/testHub.js';
import type { TestHub } from './support/testHub.js';
import {
  consumer,
  get,
  idOf,
  pkg,
  post,
  startTestHub,
  tempDir,
  testConfiguration,
  hubsStoppedAfterEach,
} from './support/testHub.js';
import { pollMessages, subscribeToMessages } from './support/subscriptions.js';
import { leaveWaitingPoll, waitingPolls } from './support/waitingPolls.js';

type Hub = TestHub;
const hub = hubsStoppedAfterEach();

const app = consumer('App');
const dash = consumer('Dashboard');
const s1p1 = pkg('S1', 'P1');
const s1p2 = pkg('S1', 'P2');
const s2p1 = pkg('S2', 'P1', 'other-key-0001');
const iface = (who: Identity) => (who.SentinelName === 'Consumer' ? 'consumer' : 'platform');

const send = async (h: Hub, who: Identity, scope: string, args: string[], key: string, data: unknown = null) => {
  const reply = await get(h, `${iface(who)}/SendMessage`, who, {
    scope,
    args: args.join(','),
    key,
    data: JSON.stringify(data),
  });
  expect(reply.status, reply.text).toBe(204);
};

/** Subscribes everyone, sends one message, and returns who received it. */
async function recipients(h: Hub, sender: Identity, scope: string, args: string[]): Promise<string[]> {
  const everyone = [app, dash, s1p1, s1p2, s2p1];
  const subs = await Promise.all(everyone.map(async (who) => ({ who, id: await subscribeToMessages(h, who) })));
  await send(h, sender, scope, args, 'Ping');
  const got: string[] = [];
  for (const { who, id } of subs)
    if ((await pollMessages(h, who, id)).length > 0) got.push(`${who.SentinelName}/${who.PackageName}`);
  return got.sort();
}

describe('callers', () => {
  it("gives a new caller's concurrent first requests one ConnectionId", async () => {
    const h = await hub();
    const storm = consumer('Storm');
    const ids = await Promise.all(Array.from({ length: 40 }, () => subscribeToMessages(h, storm)));
    expect(new Set(ids).size).toBe(40);
    const { sqlite } = sqliteDatabaseOf(h.store)!;
    const owners = sqlite
      .prepare(`select distinct owner_connection_id from subscriptions where id in (select value from json_each(?))`)
      .pluck()
      .all(JSON.stringify(ids));
    expect(owners).toHaveLength(1);
    expect(sqlite.prepare(`select count(*) from callers where friendly_name = 'Consumer/Storm'`).pluck().get()).toBe(1);
  });
});

describe('scopes', () => {
  it.each([
    ['All (sender included)', app, 'All', [], ['Consumer/App', 'Consumer/Dashboard', 'S1/P1', 'S1/P2', 'S2/P1']],
    ['Others (sender excluded)', app, 'Others', [], ['Consumer/Dashboard', 'S1/P1', 'S1/P2', 'S2/P1']],
    ['Other (singular)', s1p1, 'other', [], ['Consumer/App', 'Consumer/Dashboard', 'S1/P2', 'S2/P1']],
    ['Sentinel', app, 'Sentinel', ['S1'], ['S1/P1', 'S1/P2']],
    ['Sentinel, two args', app, 'Sentinel', ['S1', 'S2'], ['S1/P1', 'S1/P2', 'S2/P1']],
    ['Package by bare name (every instance)', app, 'Package', ['P1'], ['S1/P1', 'S2/P1']],
    ['Package by Sentinel/Package', app, 'Package', ['S1/P1'], ['S1/P1']],
    ['Package to a consumer', s1p1, 'Package', ['Consumer/Dashboard'], ['Consumer/Dashboard']],
    ['Package, several args', app, 'Package', ['S1/P2', 'Consumer/App'], ['Consumer/App', 'S1/P2']],
    ['Group from the configuration', app, 'Group', ['Lights'], ['S1/P1']],
    ['a scope given as its wire number (Sentinel = 3)', app, '3', ['S2'], ['S2/P1']],
  ] as const)('%s', async (_what, sender, scope, args, expected) => {
    const h = await hub();
    expect(await recipients(h, sender, scope, [...args])).toEqual(expected);
  });

  it('reaches a caller by its ConnectionId', async () => {
    const h = await hub();
    const appSub = await subscribeToMessages(h, app);
    await send(h, app, 'Package', ['S1/P1'], 'WhoAmI');
    const p1Sub = await subscribeToMessages(h, s1p1);
    await send(h, app, 'Package', ['S1/P1'], 'WhoAmI');
    const [received] = await pollMessages(h, s1p1, p1Sub);
    await send(h, s1p1, 'Package', [received.Sender.ConnectionId], 'Direct');
    expect((await pollMessages(h, app, appSub)).map((m) => m.Key)).toEqual(['Direct']);
  });

  it('delivers group messages to subscriptions that joined the group', async () => {
    const h = await hub();
    const joined = idOf(await get(h, 'consumer/SubscribeToMessageGroup', app, { group: 'Kitchen' }));
    const alsoJoined = idOf(await get(h, 'platform/SubscribeToMessageGroup', s2p1, { group: 'Kitchen' }));
    const notJoined = await subscribeToMessages(h, dash);
    // Joining again with the id adds to the same subscription.
    expect(
      idOf(await get(h, 'consumer/SubscribeToMessageGroup', app, { group: 'Garden', subscriptionId: joined })),
    ).toBe(joined);
    await send(h, s1p1, 'Group', ['Kitchen'], 'On');
    await send(h, s1p1, 'Group', ['Garden'], 'Water');
    expect((await pollMessages(h, app, joined)).map((m) => m.Key)).toEqual(['On', 'Water']);
    expect((await pollMessages(h, s2p1, alsoJoined)).map((m) => m.Key)).toEqual(['On']);
    expect(await pollMessages(h, dash, notJoined)).toEqual([]);
  });
});

describe('records, order and long-polling', () => {
  it('returns message records in the wire shape', async () => {
    const h = await hub();
    const id = await subscribeToMessages(h, app);
    const reply = await post(h, 'platform/SendMessage', s1p1, {
      Scope: { Type: 'Package', Args: ['Consumer/App'] },
      Key: 'SetLight',
      Data: [1, true],
    });
    expect(reply.status).toBe(204);
    const [message] = await pollMessages(h, app, id);
    expect(message).toEqual({
      Sender: { ConnectionId: expect.stringMatching(/^[0-9a-f-]{36}$/), Type: 3, FriendlyName: 'S1/P1' },
      Scope: { Scope: 2, Args: ['Consumer/App'], SagaId: null },
      Key: 'SetLight',
      Data: [1, true],
    });
    await send(h, dash, 'All', [], 'Hello', { Temperature: 21 });
    const [fromConsumer] = await pollMessages(h, app, id);
    expect(fromConsumer.Sender).toMatchObject({ Type: 2, FriendlyName: 'Consumer/Dashboard' });
    expect(fromConsumer.Scope).toEqual({ Scope: 5, Args: [], SagaId: null });
  });

  it('accepts lenient JSON in GET data and POST bodies, and either scope key on both interfaces', async () => {
    const h = await hub();
    const id = await subscribeToMessages(h, app);
    await get(h, 'platform/SendMessage', s1p1, {
      scope: 'Package',
      args: 'Consumer/App',
      key: 'A',
      data: "[ 'a', 1, ]",
    });
    await get(h, 'platform/SendMessage', s1p1, {
      scope: 'Package',
      args: 'Consumer/App',
      key: 'B',
      data: 'plain text',
    });
    await post(
      h,
      'consumer/SendMessage',
      dash,
      "{ Scope: { Type: 'Package', Args: ['Consumer/App'] }, Key: 'C', Data: { x: 1 } }",
    );
    await post(h, 'platform/SendMessage', s1p1, {
      Scope: { Scope: 2, Args: ['Consumer/App'], SagaId: null },
      Key: 'D',
    });
    expect((await pollMessages(h, app, id)).map((m) => [m.Key, m.Data])).toEqual([
      ['A', ['a', 1]],
      ['B', 'plain text'],
      ['C', { x: 1 }],
      ['D', null],
    ]);
  });

  it('keeps order and honours limit, losing and repeating nothing between polls', async () => {
    const h = await hub();
    const id = await subscribeToMessages(h, app);
    for (let i = 0; i < 25; i++) await send(h, s1p1, 'Package', ['Consumer/App'], `K${i}`, i);
    const seen: number[] = [];
    for (;;) {
      const batch = await pollMessages(h, app, id, { limit: 10 });
      if (batch.length === 0) break;
      expect(batch.length).toBeLessThanOrEqual(10);
      seen.push(...batch.map((m) => m.Data as number));
    }
    expect(seen).toEqual([...Array(25).keys()]);
  });

  it('wakes only the waiters of the target subscriptions', async () => {
    const h = await hub();
    const target = await subscribeToMessages(h, app);
    const bystander = await subscribeToMessages(h, dash);
    // The target's poll (two minutes) outlives the test: only a wake-up answers it. The bystander's
    // answers at its timeout, empty.
    const targetPoll = pollMessages(h, app, target, { timeout: 120_000 });
    const bystanderPoll = pollMessages(h, dash, bystander, { timeout: 1000 });
    await waitingPolls(h, 2);
    await send(h, s1p1, 'Package', ['Consumer/App'], 'Only');
    expect((await targetPoll).map((m) => m.Key)).toEqual(['Only']);
    expect(await bystanderPoll).toEqual([]);
  });

  it('releases the waiter of a client that disconnects, without consuming anything', async () => {
    const h = await hub();
    const id = await subscribeToMessages(h, app);
    await leaveWaitingPoll(h, 'consumer/GetMessages', app, { subscriptionId: id, timeout: 10_000 });
    await send(h, s1p1, 'Package', ['Consumer/App'], 'Kept');
    expect((await pollMessages(h, app, id)).map((m) => m.Key)).toEqual(['Kept']);
  });

  it('delivers messages queued before a restart afterwards', async () => {
    const dataDir = tempDir();
    const first = await startTestHub({ dataDir });
    const id = await subscribeToMessages(first, app);
    await send(first, s1p1, 'Package', ['Consumer/App'], 'Before', 1);
    await send(first, s1p1, 'All', [], 'Before', 2);
    await first.stop();
    const second = await hub({ dataDir });
    expect((await pollMessages(second, app, id)).map((m) => m.Data)).toEqual([1, 2]);
  });

  it('bounds each queue, dropping the oldest', async () => {
    const h = await hub({ options: { messageQueueLimit: 3 } });
    const id = await subscribeToMessages(h, app);
    for (let i = 1; i <= 5; i++) await send(h, s1p1, 'Package', ['Consumer/App'], 'N', i);
    expect((await pollMessages(h, app, id)).map((m) => m.Data)).toEqual([3, 4, 5]);
  });
});

describe('sagas', () => {
  it('round-trips a saga between a consumer and a virtual package over HTTP', async () => {
    const h = await hub();
    const callerSub = await subscribeToMessages(h, app);
    const calleeSub = await subscribeToMessages(h, s1p1);
    await get(h, 'consumer/SendMessage', app, {
      scope: 'Package',
      args: 'S1/P1',
      key: 'Add',
      data: '[1, 2]',
      sagaId: 'saga-42',
    });
    const [request] = await pollMessages(h, s1p1, calleeSub, { timeout: 2000 });
    expect(request).toMatchObject({
      Key: 'Add',
      Data: [1, 2],
      Scope: { SagaId: 'saga-42' },
      Sender: { FriendlyName: 'Consumer/App' },
    });
    // Firmware answers with the `Scope` key on the virtual package interface.
    const reply = await post(h, 'constellation/SendMessage', s1p1, {
      Scope: { Scope: 'Package', Args: [request.Sender.FriendlyName], SagaId: request.Scope.SagaId },
      Key: '__Response',
      Data: 3,
    });
    expect(reply.status).toBe(204);
    expect(await pollMessages(h, app, callerSub, { timeout: 2000 })).toEqual([
      expect.objectContaining({
        Key: '__Response',
        Data: 3,
        Scope: { Scope: 2, Args: ['Consumer/App'], SagaId: 'saga-42' },
      }),
    ]);
  });
});

describe('authorizations', () => {
  function restrictedConfig() {
    const config = testConfiguration();
    const dev = config.credentials[1];
    dev.authorizations.messages = {
      defaultAuthorization: 'Deny',
      rules: [
        { id: '1', authorization: 'Deny', scope: 'Package', args: 'S2/*', messageKey: '*' },
        { id: '2', authorization: 'Allow', scope: '*', args: '*', messageKey: 'Ping' },
      ],
    };
    dev.authorizations.groups = {
      defaultAuthorization: 'Allow',
      rules: [{ id: '1', authorization: 'Deny', groupName: 'Admin*' }],
    };
    return config;
  }

  it('refuses a send the credential does not allow with 403 naming the rule, and queues nothing', async () => {
    const h = await hub({ config: restrictedConfig() });
    const id = await subscribeToMessages(h, s2p1);
    const ok = await get(h, 'consumer/SendMessage', app, { scope: 'All', key: 'Ping' });
    expect(ok.status).toBe(204);
    const byDefault = await get(h, 'consumer/SendMessage', app, { scope: 'All', key: 'Reboot' });
    expect(byDefault.status).toBe(403);
    expect(byDefault.json<{ MessageDetail: string }>().MessageDetail).toMatch(/denies messages by default/);
    const byRule = await get(h, 'consumer/SendMessage', app, { scope: 'Package', args: 'S2/P1', key: 'Ping' });
    expect(byRule.status).toBe(403);
    expect(byRule.json<{ MessageDetail: string }>().MessageDetail).toMatch(/message rule 1/);
    expect((await pollMessages(h, s2p1, id)).map((m) => m.Key)).toEqual(['Ping']);
  });

  it('lets a saga reply through only for a request the replier received and has not answered', async () => {
    const h = await hub({ config: restrictedConfig() });
    const requester = await subscribeToMessages(h, s2p1);
    const replier = await subscribeToMessages(h, s1p1);
    // Never asked: a forged reply to everyone is refused and reaches nobody.
    const forged = await get(h, 'platform/SendMessage', s1p1, {
      scope: 'All',
      key: '__Response',
      sagaId: 'never-sent',
      data: '"forged"',
    });
    expect(forged.status).toBe(403);
    expect(forged.json<{ MessageDetail: string }>().MessageDetail).toMatch(/\. A saga reply is exempt only/);
    // Asked but not yet received: still refused.
    await send(h, s2p1, 'Package', ['S1/P1'], 'Add', [1, 2]);
    const early = await get(h, 'platform/SendMessage', s1p1, {
      scope: 'Package',
      args: 'S2/P1',
      key: '__Response',
      sagaId: 's1',
      data: '3',
    });
    expect(early.status).toBe(403);
    await get(h, 'consumer/SendMessage', app, { scope: 'Package', args: 'S1/P1', key: 'Ping', sagaId: 's1' });
    expect((await pollMessages(h, s1p1, replier)).map((m) => m.Scope.SagaId)).toEqual([null, 's1']);
    const reply = await get(h, 'platform/SendMessage', s1p1, {
      scope: 'Package',
      args: 'S2/P1',
      key: '__Response',
      sagaId: 's1',
      data: '3',
    });
    expect(reply.status).toBe(204);
    // Answered once: a second reply needs an authorization of its own.
    const again = await get(h, 'platform/SendMessage', s1p1, {
      scope: 'Package',
      args: 'S2/P1',
      key: '__Response',
      sagaId: 's1',
      data: '4',
    });
    expect(again.status).toBe(403);
    expect((await pollMessages(h, s2p1, requester)).map((m) => [m.Key, m.Data])).toEqual([['__Response', 3]]);
  });

  it('remembers an unanswered saga request across a restart', async () => {
    const dataDir = tempDir();
    const first = await startTestHub({ dataDir, config: restrictedConfig() });
    const replier = await subscribeToMessages(first, s1p1);
    await get(first, 'consumer/SendMessage', app, { scope: 'Package', args: 'S1/P1', key: 'Ping', sagaId: 'kept' });
    expect((await pollMessages(first, s1p1, replier)).map((m) => m.Scope.SagaId)).toEqual(['kept']);
    await first.stop();
    const second = await hub({ dataDir, config: restrictedConfig() });
    const reply = await get(second, 'platform/SendMessage', s1p1, {
      scope: 'Package',
      args: 'Consumer/App',
      key: '__Response',
      sagaId: 'kept',
    });
    expect(reply.status).toBe(204);
  });

  it('refuses joining a denied group', async () => {
    const h = await hub({ config: restrictedConfig() });
    const join = await get(h, 'consumer/SubscribeToMessageGroup', app, { group: 'Admins' });
    expect(join.status).toBe(403);
    expect(join.json<{ MessageDetail: string }>().MessageDetail).toMatch(/group rule 1/);
  });
});

describe('bad input queues nothing', () => {
  it('answers clear 400s', async () => {
    const h = await hub();
    const id = await subscribeToMessages(h, app);
    const cases: [Promise<Awaited<ReturnType<typeof get>>>, RegExp][] = [
      [get(h, 'consumer/SendMessage', dash, { scope: 'Everyone', key: 'K' }), /Unknown scope 'Everyone'/],
      [get(h, 'consumer/SendMessage', dash, { scope: 'Group', key: 'K' }), /needs at least one argument/],
      [
        get(h, 'consumer/SendMessage', dash, { scope: 'Package', args: ' , ', key: 'K' }),
        /needs at least one argument/,
      ],
      [get(h, 'consumer/SendMessage', dash, { scope: 'All' }), /'key' is required/],
      [get(h, 'consumer/SendMessage', dash, { key: 'K' }), /'scope' is required/],
      [post(h, 'consumer/SendMessage', dash, '{ Scope: '), /not valid JSON/],
      [post(h, 'consumer/SendMessage', dash, { Scope: { Scope: 'All' } }), /Key/],
      [post(h, 'consumer/SendMessage', dash, { Scope: { Args: [] }, Key: 'K' }), /Scope.Scope/],
      [post(h, 'consumer/SendMessage', dash, { Scope: { Scope: 'All', Args: 'x' }, Key: 'K' }), /Scope.Args/],
      [post(h, 'consumer/SendMessage', dash, { Scope: { Scope: 'All' }, Key: 'K' }, 'text/plain'), /Content-Type/],
      [post(h, 'consumer/SendMessage', dash, ''), /empty|JSON/],
      [get(h, 'consumer/GetMessages', app, { subscriptionId: id, timeout: 'x' }), /timeout/],
      [get(h, 'consumer/GetMessages', app, { subscriptionId: id, limit: '1.5' }), /limit/],
      [get(h, 'consumer/SubscribeToMessageGroup', app, {}), /'group' is required/],
      [get(h, 'consumer/SubscribeToMessage', app, { subscriptionId: 'nope' }), /not a GUID/],
    ];
    for (const [pending, message] of cases) {
      const reply = await pending;
      expect(reply.status, reply.text).toBe(400);
      const body = reply.json<{ Message: string; MessageDetail?: string }>();
      expect(`${body.Message} ${body.MessageDetail ?? ''}`).toMatch(message);
    }
    expect(await pollMessages(h, app, id)).toEqual([]);
  });

  it('answers the lost-subscription 500 for an unknown or foreign message subscription', async () => {
    const h = await hub();
    const id = await subscribeToMessages(h, app);
    expect((await get(h, 'consumer/GetMessages', dash, { subscriptionId: id, timeout: 0 })).status).toBe(500);
    expect((await get(h, 'consumer/GetMessages', app, { timeout: 0 })).status).toBe(400);
  });
});
