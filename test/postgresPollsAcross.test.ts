/**
 * The polling machinery across hub processes on one PostgreSQL (issue 22), over real HTTP with two
 * hubs on one database (each its own data directory, pools, listener and notifier, as two processes):
 * one poll per subscription (a newer poll on B ends the older on A, which consumes nothing), a filter
 * or group added through B while the poll waits on A, and a sweep on A that leaves a subscription whose
 * poll waits on B. Nothing waits for a time to pass but the sweep test's own poll: each test waits for
 * what it expects, its timeout (shorter than the polls') is the bound.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import type { MessageRecord, StateObjectUpdateRecord } from '../src/hub/records.js';
import { consumer, get, idOf, pkg, hubsOn } from './support/testHub.js';
import type { TestHub } from './support/testHub.js';
import { postgresServer, testDatabase, testPool } from './support/postgres.js';
import type { TestDatabase } from './support/postgres.js';
import { until } from './support/until.js';
import { waitingPollCount, waitingPolls } from './support/waitingPolls.js';

const server = await postgresServer();
/** Longer than any test here may take: a poll that answers did not time out. */
const LONG_POLL_MS = 60_000;
const TEST_MS = 30_000;

describe.skipIf(!server.available)('polls across hub processes on one PostgreSQL', () => {
  let database: TestDatabase;
  let admin: pg.Pool;
  let a: TestHub;
  let b: TestHub;

  beforeAll(async () => {
    database = await testDatabase(server);
    [a, b] = await hubsOn(database.url, 2);
    admin = testPool(database.url, 2);
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await admin?.end();
    await database?.drop();
  });

  /** Polls ordered so far, by any process. */
  const claims = async () =>
    Number(
      (await admin.query<{ n: string }>('select case when is_called then last_value else 0 end as n from poll_order'))
        .rows[0].n,
    );
  const send = (from: TestHub, data: string, scope = 'All', args?: string) =>
    get(from, 'consumer/SendMessage', consumer('Sender'), {
      scope,
      key: 'K',
      data: JSON.stringify(data),
      ...(args === undefined ? {} : { args }),
    });

  it(
    'a newer poll of a subscription on B ends the older one on A at once, empty; the newer gets the next message',
    async () => {
      const app = consumer('Twice');
      const id = idOf(await get(a, 'consumer/SubscribeToMessage', app));
      const before = await claims();
      const older = get(a, 'consumer/GetMessages', app, { subscriptionId: id, timeout: LONG_POLL_MS });
      await waitingPolls(a, 1);
      await until(async () => (await claims()) === before + 1); // the older has its place
      const newer = get(b, 'consumer/GetMessages', app, { subscriptionId: id, timeout: LONG_POLL_MS });
      const ended = await older;
      expect(ended.status).toBe(200);
      expect(ended.json()).toEqual([]);
      await waitingPolls(b, 1);
      expect((await send(a, 'next')).status).toBe(204);
      const answer = await newer;
      expect(answer.json<MessageRecord[]>().map((m) => m.Data)).toEqual(['next']);
    },
    TEST_MS,
  );

  it(
    'two polls of one subscription started at once on A and B: the older ends, the newer stays and gets the message',
    async () => {
      const app = consumer('Together');
      const id = idOf(await get(b, 'consumer/SubscribeToMessage', app));
      const polls = [a, b].map((h) =>
        get(h, 'consumer/GetMessages', app, { subscriptionId: id, timeout: LONG_POLL_MS }),
      );
      const first = await Promise.race(polls);
      expect(first.status).toBe(200);
      expect(first.json()).toEqual([]);
      // The other still waits: they never end each other.
      await until(async () => (await waitingPollCount(a)) + (await waitingPollCount(b)) === 1);
      expect((await send(a, 'for the newer')).status).toBe(204);
      const answers = await Promise.all(polls);
      expect(answers.map((r) => r.json<MessageRecord[]>().map((m) => m.Data)).sort()).toEqual([[], ['for the newer']]);
    },
    TEST_MS,
  );

  it(
    'a StateObject filter added through B while the poll waits on A: a push only it matches answers the poll',
    async () => {
      const app = consumer('Adder');
      const filter = { sentinel: 'S1', package: 'P1' };
      const id = idOf(await get(a, 'consumer/SubscribeToStateObjects', app, { ...filter, name: 'Old' }));
      const poll = get(a, 'consumer/GetStateObjects', app, { subscriptionId: id, timeout: LONG_POLL_MS });
      await waitingPolls(a, 1);
      expect(
        idOf(await get(b, 'consumer/SubscribeToStateObjects', app, { ...filter, name: 'New', subscriptionId: id })),
      ).toBe(id);
      expect((await get(b, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'New', value: 1 })).status).toBe(204);
      const answer = await poll;
      expect(answer.status).toBe(200);
      expect(answer.json<StateObjectUpdateRecord[]>().map((u) => u.StateObject.Name)).toEqual(['New']);
    },
    TEST_MS,
  );

  it(
    'a message group joined through B while the poll waits on A: a message to only that group answers the poll',
    async () => {
      const app = consumer('Joiner');
      const id = idOf(await get(a, 'consumer/SubscribeToMessageGroup', app, { group: 'Kitchen' }));
      const poll = get(a, 'consumer/GetMessages', app, { subscriptionId: id, timeout: LONG_POLL_MS });
      await waitingPolls(a, 1);
      expect(idOf(await get(b, 'consumer/SubscribeToMessageGroup', app, { group: 'Garden', subscriptionId: id }))).toBe(
        id,
      );
      expect((await send(b, 'water', 'Group', 'Garden')).status).toBe(204);
      const answer = await poll;
      expect(answer.status).toBe(200);
      expect(answer.json<MessageRecord[]>().map((m) => m.Data)).toEqual(['water']);
    },
    TEST_MS,
  );
});

describe.skipIf(!server.available)('the idle sweep with two hub processes on one PostgreSQL', () => {
  const IDLE_MS = 1_000;
  let database: TestDatabase;
  let a: TestHub;
  let b: TestHub;

  beforeAll(async () => {
    database = await testDatabase(server);
    [a, b] = await hubsOn(database.url, 2, { subscriptionIdleMs: IDLE_MS });
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await database?.drop();
  });

  it('leaves a subscription whose poll waits on B longer than the idle time, and expires one nobody polls', async () => {
    const app = consumer('Patient');
    const [kept, idle] = [
      idOf(await get(a, 'consumer/SubscribeToMessage', app)),
      idOf(await get(a, 'consumer/SubscribeToMessage', app)),
    ];
    // Both sweep every 100 ms (a tenth of the idle time), each when it is its turn; the poll waits 5 idle times.
    const waited = await get(b, 'consumer/GetMessages', app, { subscriptionId: kept, timeout: 5 * IDLE_MS });
    expect(waited.status).toBe(200);
    expect(waited.json()).toEqual([]);
    expect((await get(a, 'consumer/GetMessages', app, { subscriptionId: kept, timeout: 0 })).status).toBe(200);
    expect((await get(a, 'consumer/GetMessages', app, { subscriptionId: idle, timeout: 0 })).status).toBe(500);
  }, 30_000);
});
