import { describe, expect, it } from 'vitest';
import type { StateObjectUpdateRecord } from '../src/hub/records.js';
import {
  admin,
  call,
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
import type { TestHub } from './support/testHub.js';
import { pollStateObjects, subscribeToStateObjects } from './support/subscriptions.js';
import { until } from './support/until.js';
import { leaveWaitingPoll, metricsText, waitingPollCount, waitingPolls } from './support/waitingPolls.js';

type Hub = TestHub;
const hub = hubsStoppedAfterEach();

const p1 = pkg('S1', 'P1');
const app = consumer();
const push = (h: Hub, name: string, value: unknown, extra: Record<string, string | number> = {}, who = p1) =>
  get(h, 'platform/PushStateObject', who, {
    name,
    value: typeof value === 'string' ? value : JSON.stringify(value),
    ...extra,
  });
const subscribe = (h: Hub, query: Record<string, string> = {}, who = app) => subscribeToStateObjects(h, who, query);
const poll = (h: Hub, id: string, query: Record<string, string | number> = {}, who = app) =>
  pollStateObjects(h, who, id, { timeout: 1000, ...query });
const values = (updates: StateObjectUpdateRecord[]) => updates.map((u) => [u.StateObject.Name, u.StateObject.Value]);

describe('publishing and requesting', () => {
  it('stores pushes from GET (lenient JSON values) and POST, with inferred types', async () => {
    const h = await hub();
    const before = Date.now();
    expect((await push(h, 'Int', '21')).status).toBe(204);
    await push(h, 'Dbl', '21.5');
    await push(h, 'Huge', '12345678901234567890123');
    await push(h, 'Bool', 'true');
    await push(h, 'Text', 'hello world');
    // Looks like the start of JSON, is not: stored as the text it is.
    await push(h, 'Almost', 'trueish');
    await push(h, 'Inf', 'Infinity');
    await push(h, 'Dash', '-');
    await push(h, 'Obj', "{ Temperature: 21, Unit: 'C', }");
    const posted = await post(h, 'platform/PushStateObject', p1, {
      Name: 'Posted',
      Value: { a: [1, 2] },
      Type: '',
      Lifetime: 0,
      Metadatas: null,
    });
    expect(posted.status).toBe(204);
    await post(h, 'platform/PushStateObject', p1, {
      Name: 'Meta',
      Value: 1,
      Type: 'My.Type',
      Metadatas: { unit: 'C' },
    });
    const all = (await get(h, 'consumer/RequestStateObjects', app)).json<Record<string, unknown>[]>();
    const byName = Object.fromEntries(all.map((o) => [o.Name, o]));
    expect(byName.Int).toMatchObject({
      SentinelName: 'S1',
      PackageName: 'P1',
      Type: 'System.Int64',
      Value: 21,
      Lifetime: 0,
      IsExpired: false,
      Metadatas: {},
    });
    expect(byName.Dbl).toMatchObject({ Type: 'System.Double', Value: 21.5 });
    // Beyond 2^53 JSON has already rounded it: a double, not an Int64 that pretends to be exact.
    expect(byName.Huge).toMatchObject({ Type: 'System.Double', Value: 1.2345678901234568e22 });
    expect(byName.Bool).toMatchObject({ Type: 'System.Boolean', Value: true });
    expect(byName.Text).toMatchObject({ Type: 'System.String', Value: 'hello world' });
    expect([byName.Almost.Value, byName.Inf.Value, byName.Dash.Value]).toEqual(['trueish', 'Infinity', '-']);
    expect(byName.Obj).toMatchObject({ Type: 'Object', Value: { Temperature: 21, Unit: 'C' } });
    expect(byName.Posted).toMatchObject({ Type: 'Object', Value: { a: [1, 2] } });
    expect(byName.Meta).toMatchObject({ Type: 'My.Type', Metadatas: { unit: 'C' } });
    // Stamped when pushed (a second's leeway for a stamp without milliseconds).
    expect(Date.parse(byName.Int.LastUpdate as string)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('filters requests by sentinel, package, name (with *) and type', async () => {
    const h = await hub();
    await push(h, 'Temperature1', 1);
    await push(h, 'Temperature2', 2.5);
    await push(h, 'Humidity', 3);
    await push(h, 'Temperature1', 4, {}, pkg('S1', 'P2'));
    const names = async (q: Record<string, string>) =>
      (await get(h, 'consumer/RequestStateObjects', app, q))
        .json<{ PackageName: string; Name: string }[]>()
        .map((o) => `${o.PackageName}.${o.Name}`);
    expect(await names({ name: 'Temperature*' })).toEqual(['P1.Temperature1', 'P1.Temperature2', 'P2.Temperature1']);
    expect(await names({ package: 'P2' })).toEqual(['P2.Temperature1']);
    expect(await names({ type: 'System.Double' })).toEqual(['P1.Temperature2']);
    expect(await names({ sentinel: 'S2' })).toEqual([]);
    expect(await names({ name: '*midi*' })).toEqual(['P1.Humidity']);
  });

  it('a push with the same sentinel, package and name replaces value and type', async () => {
    const h = await hub();
    await push(h, 'X', 1);
    await push(h, 'X', 'text');
    const all = (await get(h, 'consumer/RequestStateObjects', app, { name: 'X' })).json<
      { Value: unknown; Type: string }[]
    >();
    expect(all).toEqual([expect.objectContaining({ Value: 'text', Type: 'System.String' })]);
  });

  it('purges only the caller’s own objects, by name and type', async () => {
    const h = await hub();
    await push(h, 'A1', 1);
    await push(h, 'A2', 'x');
    await push(h, 'B', 1);
    await push(h, 'A1', 1, {}, pkg('S1', 'P2'));
    expect((await get(h, 'platform/PurgeStateObjects', p1, { name: 'A*', type: 'System.Int64' })).status).toBe(204);
    const left = (await get(h, 'consumer/RequestStateObjects', app)).json<{ PackageName: string; Name: string }[]>();
    expect(left.map((o) => `${o.PackageName}.${o.Name}`).sort()).toEqual(['P1.A2', 'P1.B', 'P2.A1']);
    await get(h, 'platform/PurgeStateObjects', p1);
    const after = (await get(h, 'consumer/RequestStateObjects', app)).json<{ PackageName: string }[]>();
    expect(after.map((o) => o.PackageName)).toEqual(['P2']);
  });
});

describe('subscriptions and long-polling', () => {
  it('answers a subscription id as a 38-byte JSON string and returns the same id when passed again', async () => {
    const h = await hub();
    const reply = await get(h, 'consumer/SubscribeToStateObjects', app, { name: 'A' });
    expect(reply.text).toHaveLength(38);
    expect(reply.text).toMatch(/^"[0-9a-f-]{36}"$/);
    expect(reply.headers.get('content-length')).toBe('38');
    const id = reply.json<string>();
    expect(idOf(await get(h, 'consumer/SubscribeToStateObjects', app, { subscriptionId: id, name: 'B' }))).toBe(id);
  });

  it('re-creates an unknown (expired) subscription id empty, under that same id', async () => {
    const h = await hub();
    const id = '3f2504e0-4f89-11d3-9a0c-0305e82c3301';
    expect(idOf(await get(h, 'consumer/SubscribeToStateObjects', app, { subscriptionId: id, name: 'A' }))).toBe(id);
    await push(h, 'A', 5);
    expect(values(await poll(h, id))).toEqual([['A', 5]]);
  });

  it('returns current values on the first poll of a new subscription', async () => {
    const h = await hub();
    await push(h, 'Temp', 20);
    const id = await subscribe(h, { name: 'Temp' });
    expect(values(await poll(h, id))).toEqual([['Temp', 20]]);
    expect(await poll(h, id, { timeout: 0 })).toEqual([]);
  });

  // A poll of the longest timeout (two minutes) outlives the test: only a wake-up can answer it. How
  // soon a wake-up answers is measured by the benchmarks (docs/benchmarks.md), not asserted here.
  it('wakes a waiting poll on the commit of a matching push', async () => {
    const h = await hub();
    const id = await subscribe(h, { name: 'Temp' });
    const waiting = poll(h, id, { timeout: 120_000 });
    await waitingPolls(h, 1);
    await push(h, 'Temp', 21);
    expect(values(await waiting)).toEqual([['Temp', 21]]);
  });

  it('is not woken by a push that does not match', async () => {
    const h = await hub();
    const id = await subscribe(h, { name: 'Temp', package: 'P1' });
    const waiting = poll(h, id, { timeout: 120_000 });
    await waitingPolls(h, 1);
    await push(h, 'Other', 1);
    await push(h, 'Temp', 2, {}, pkg('S1', 'P2'));
    // Answered by either push, it would hold [] or that object; it still waits and answers the matching one.
    await push(h, 'Temp', 3);
    expect(values(await waiting)).toEqual([['Temp', 3]]);
  });

  it('coalesces: five pushes between two polls come back once, with the latest value', async () => {
    const h = await hub();
    const id = await subscribe(h, { name: 'Temp*' });
    for (let i = 1; i <= 5; i++) await push(h, 'Temp', i);
    await push(h, 'Temp2', 'x');
    const updates = await poll(h, id);
    expect(values(updates)).toEqual([
      ['Temp', 5],
      ['Temp2', 'x'],
    ]);
  });

  it('returns an object matched by several filters of one subscription once', async () => {
    const h = await hub();
    const id = await subscribe(h, { name: 'Temp' });
    await subscribe(h, { subscriptionId: id, name: 'T*' });
    await subscribe(h, { subscriptionId: id, package: 'P1' });
    await push(h, 'Temp', 1);
    expect(values(await poll(h, id))).toEqual([['Temp', 1]]);
  });

  it('answers [] when the timeout passes, and at once with timeout=0', async () => {
    const h = await hub();
    const id = await subscribe(h, { name: 'Nothing' });
    let t = Date.now();
    expect(await poll(h, id, { timeout: 1000 })).toEqual([]);
    expect(Date.now() - t).toBeGreaterThanOrEqual(950);
    // At once with timeout=0: six such polls answer while a poll of 5 s still waits (had 0 been taken as
    // the 1 s minimum, they would take 6 s).
    const other = await subscribe(h, { name: 'Nothing' });
    const leave = new AbortController();
    let answered = false;
    const waiting = call(h, 'GET', 'consumer/GetStateObjects', app, {
      query: { subscriptionId: other, timeout: 5000 },
      signal: leave.signal,
    }).then(
      () => (answered = true),
      () => {},
    );
    await waitingPolls(h, 1);
    for (let i = 0; i < 6; i++) expect(await poll(h, id, { timeout: 0 })).toEqual([]);
    expect(answered).toBe(false);
    leave.abort();
    await waiting;
    t = Date.now();
    expect(await poll(h, id, { timeout: 5 })).toEqual([]);
    expect(Date.now() - t).toBeGreaterThanOrEqual(950);
  });

  it('honours limit and keeps the rest for the next poll', async () => {
    const h = await hub();
    for (const n of ['A', 'B', 'C']) await push(h, n, 1);
    const id = await subscribe(h);
    expect(values(await poll(h, id, { limit: 2 }))).toEqual([
      ['A', 1],
      ['B', 1],
    ]);
    expect(values(await poll(h, id, { limit: 2 }))).toEqual([['C', 1]]);
  });

  it('releases the waiter of a client that disconnects, without consuming anything', async () => {
    const h = await hub();
    const id = await subscribe(h, { name: 'Temp' });
    await leaveWaitingPoll(h, 'consumer/GetStateObjects', app, { subscriptionId: id, timeout: 10_000 });
    await push(h, 'Temp', 42);
    expect(values(await poll(h, id))).toEqual([['Temp', 42]]);
  });

  it('a second poll on the same subscription releases the first with []', async () => {
    const h = await hub();
    const id = await subscribe(h, { name: 'Temp' });
    const first = poll(h, id, { timeout: 10000 });
    await waitingPolls(h, 1);
    const second = poll(h, id, { timeout: 10000 });
    expect(await first).toEqual([]);
    await push(h, 'Temp', 3);
    expect(values(await second)).toEqual([['Temp', 3]]);
  });

  it('announces a purge once, with IsDeleted and a null value', async () => {
    const h = await hub();
    await push(h, 'Gone', 1);
    const id = await subscribe(h, { name: 'Gone' });
    await poll(h, id);
    await get(h, 'platform/PurgeStateObjects', p1, { name: 'Gone' });
    const updates = await poll(h, id);
    expect(updates).toEqual([
      {
        StateObject: expect.objectContaining({ Name: 'Gone', Value: null, SentinelName: 'S1', PackageName: 'P1' }),
        IsDeleted: true,
      },
    ]);
    expect(await poll(h, id, { timeout: 0 })).toEqual([]);
  });

  it('announces an expiry once, and the object stays readable with IsExpired', async () => {
    const h = await hub();
    const id = await subscribe(h, { name: 'Short' });
    await push(h, 'Short', 1, { lifetime: 1 });
    const first = await poll(h, id);
    expect(first[0].StateObject).toMatchObject({ Lifetime: 1, IsExpired: false });
    const expired = await poll(h, id, { timeout: 3000 });
    expect(expired).toEqual([{ StateObject: expect.objectContaining({ Name: 'Short', IsExpired: true }) }]);
    expect(await poll(h, id, { timeout: 1000 })).toEqual([]);
    const read = (await get(h, 'consumer/RequestStateObjects', app, { name: 'Short' })).json<
      { IsExpired: boolean }[]
    >();
    expect(read).toEqual([expect.objectContaining({ IsExpired: true })]);
  });

  it('delivers changes committed before a restart to the same subscription afterwards', async () => {
    const dataDir = tempDir();
    const first = await startTestHub({ dataDir });
    const id = await subscribe(first, { name: 'Temp' });
    await poll(first, id, { timeout: 0 });
    await push(first, 'Temp', 1);
    await push(first, 'Temp', 2);
    await first.stop();
    const second = await hub({ dataDir });
    expect(values(await poll(second, id))).toEqual([['Temp', 2]]);
  });
});

describe('ownership, expiry and authorization', () => {
  it('refuses an unknown id and another caller’s subscription with the JSON 500', async () => {
    const h = await hub();
    const id = await subscribe(h, { name: 'Temp' });
    for (const [who, sub] of [
      [consumer('Intruder'), id],
      [app, '3f2504e0-4f89-11d3-9a0c-0305e82c3301'],
      [app, 'not-a-guid'],
    ] as const) {
      const reply = await get(h, 'consumer/GetStateObjects', who, { subscriptionId: sub, timeout: 0 });
      expect(reply.status).toBe(500);
      expect(reply.json<{ Message: string }>().Message).toMatch(/does not exist or has expired/);
    }
    const messageSub = idOf(await get(h, 'consumer/SubscribeToMessage', app));
    expect((await get(h, 'consumer/GetStateObjects', app, { subscriptionId: messageSub, timeout: 0 })).status).toBe(
      500,
    );
  });

  it('expires idle subscriptions', async () => {
    const h = await hub({ options: { subscriptionIdleMs: 300, sweepIntervalMs: 100 } });
    const id = await subscribe(h, { name: 'Temp' });
    // Counted without a poll (a poll would keep it alive).
    await until(async () => !/^hub_subscriptions\{.*\} [1-9]/m.test(await metricsText(h)));
    expect((await get(h, 'consumer/GetStateObjects', app, { subscriptionId: id, timeout: 0 })).status).toBe(500);
  });

  it('does not expire a subscription while a poll waits on it', async () => {
    const h = await hub({ options: { subscriptionIdleMs: 300, sweepIntervalMs: 100 } });
    const id = await subscribe(h, { name: 'Temp' });
    expect(await poll(h, id, { timeout: 1000 })).toEqual([]);
    expect(await poll(h, id, { timeout: 0 })).toEqual([]);
  });

  it('filters Request and Subscribe by the credential’s StateObject authorizations', async () => {
    const config = testConfiguration();
    config.credentials.push({
      ...config.credentials[1],
      name: 'Limited',
      accessKey: 'limited-key-0001',
      authorizations: {
        stateObjects: {
          defaultAuthorization: 'Deny',
          rules: [
            { id: '1', authorization: 'Deny', sentinelName: '*', packageName: '*', name: 'Secret*' },
            { id: '2', authorization: 'Allow', sentinelName: 'S1', packageName: '*', name: '*' },
          ],
        },
        messages: { defaultAuthorization: 'Allow', rules: [] },
        groups: { defaultAuthorization: 'Allow', rules: [] },
      },
    });
    const h = await hub({ config });
    const limited = consumer('Limited', 'limited-key-0001');
    await push(h, 'Public', 1);
    await push(h, 'SecretKey', 2);
    await push(h, 'Elsewhere', 3, {}, pkg('S2', 'P1', 'other-key-0001'));
    const seen = (await get(h, 'consumer/RequestStateObjects', limited)).json<{ Name: string }[]>();
    expect(seen.map((o) => o.Name)).toEqual(['Public']);
    const id = await subscribe(h, {}, limited);
    expect(values(await poll(h, id, {}, limited))).toEqual([['Public', 1]]);
    await push(h, 'SecretKey', 4);
    await push(h, 'Public', 5);
    expect(values(await poll(h, id, {}, limited))).toEqual([['Public', 5]]);
  });
});

describe('bad input changes nothing', () => {
  it.each([
    ['a non-numeric timeout', 'consumer/GetStateObjects', { timeout: 'soon' }, 400],
    ['a negative limit', 'consumer/GetStateObjects', { limit: '-1' }, 400],
    ['a non-numeric limit', 'consumer/GetStateObjects', { limit: 'all' }, 400],
  ])('%s: 400', async (_what, action, query, status) => {
    const h = await hub();
    const id = await subscribe(h);
    const reply = await get(h, action, app, { subscriptionId: id, ...query });
    expect(reply.status).toBe(status);
    expect(reply.json<{ Message: string }>().Message).toMatch(/timeout|limit/);
  });

  it.each(['consumer/GetStateObjects', 'consumer/GetMessages'])(
    '%s without a subscriptionId: 400 MissingParameter, no waiter left',
    async (action) => {
      const h = await hub();
      const reply = await get(h, action, app, { timeout: 1000 });
      expect(reply.status).toBe(400);
      expect(reply.json<{ Message: string; MessageDetail: string }>()).toMatchObject({
        Message: "The parameter 'subscriptionId' is required.",
      });
      expect(await waitingPollCount(h)).toBe(0);
    },
  );

  it('refuses bad pushes with clear 400s (or 414 for a value too large for the address) and stores nothing', async () => {
    const h = await hub();
    const cases: [Promise<Awaited<ReturnType<typeof get>>>, number, RegExp][] = [
      [get(h, 'platform/PushStateObject', p1, { value: 1 }), 400, /'name' is required/],
      [get(h, 'platform/PushStateObject', p1, { name: 'X' }), 400, /'value' is required/],
      [get(h, 'platform/PushStateObject', p1, { name: 'X', value: 1, lifetime: -5 }), 400, /lifetime/],
      [get(h, 'platform/PushStateObject', p1, { name: 'X', value: 1, lifetime: 'long' }), 400, /lifetime/],
      [get(h, 'platform/PushStateObject', p1, { name: 'X', value: 'v'.repeat(9000) }), 414, /longer than/],
      [post(h, 'platform/PushStateObject', p1, '{Name: "X", Value: '), 400, /not valid JSON/],
      [post(h, 'platform/PushStateObject', p1, { Name: 'X', Value: 1, Lifetime: -1 }), 400, /Lifetime/],
      [post(h, 'platform/PushStateObject', p1, { Name: 'X', Value: 1, Lifetime: 'x' }), 400, /Lifetime/],
      [post(h, 'platform/PushStateObject', p1, { Value: 1 }), 400, /Name/],
      [post(h, 'platform/PushStateObject', p1, { Name: 'X' }), 400, /Value/],
      [post(h, 'platform/PushStateObject', p1, { Name: 'X', Value: 1 }, 'text/plain'), 400, /Content-Type/],
    ];
    for (const [pending, status, message] of cases) {
      const reply = await pending;
      expect(reply.status, reply.text).toBe(status);
      expect(
        reply.json<{ Message: string; MessageDetail?: string }>().Message +
          (reply.json<{ MessageDetail?: string }>().MessageDetail ?? ''),
      ).toMatch(message);
    }
    expect((await get(h, 'consumer/RequestStateObjects', app)).json()).toEqual([]);
    void admin;
  });
});
