/**
 * Two hub processes' worth of hubs on one PostgreSQL database (issue 22), over real HTTP: each hub has
 * its own data directory (the same configuration file) and HUB_DATABASE_URL pointing at one database.
 * A poll waiting on hub B is answered by a push or a send made through hub A.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageRecord, StateObjectUpdateRecord } from '../src/hub/records.js';
import { consumer, get, idOf, pkg, hubsOn } from './support/testHub.js';
import type { TestHub } from './support/testHub.js';
import { postgresServer, testDatabase } from './support/postgres.js';
import { metricsText, waitingPolls } from './support/waitingPolls.js';
import type { TestDatabase } from './support/postgres.js';

const server = await postgresServer();

describe.skipIf(!server.available)('hubs sharing one PostgreSQL database', () => {
  let database: TestDatabase;
  let a: TestHub;
  let b: TestHub;

  beforeAll(async () => {
    database = await testDatabase(server);
    [a, b] = await hubsOn(database.url, 2);
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await database?.drop();
  });

  it('a GetStateObjects waiting on B is answered by a push through A', async () => {
    const app = consumer('Watcher');
    const id = idOf(
      await get(b, 'consumer/SubscribeToStateObjects', app, { sentinel: 'S1', package: 'P1', name: 'Temperature' }),
    );
    expect(
      (await get(b, 'consumer/GetStateObjects', app, { subscriptionId: id, timeout: 0 })).json<unknown[]>(),
    ).toEqual([]);
    const poll = get(b, 'consumer/GetStateObjects', app, { subscriptionId: id, timeout: 20_000 });
    await waitingPolls(b, 1);
    expect((await get(a, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'Temperature', value: 21 })).status).toBe(
      204,
    );
    const reply = await poll;
    expect(reply.status).toBe(200);
    expect(reply.json<StateObjectUpdateRecord[]>().map((u) => [u.StateObject.Name, u.StateObject.Value])).toEqual([
      ['Temperature', 21],
    ]);
  });

  it('a GetMessages waiting on B is answered by a send through A', async () => {
    const app = consumer('Listener');
    const id = idOf(await get(b, 'consumer/SubscribeToMessage', app));
    const poll = get(b, 'consumer/GetMessages', app, { subscriptionId: id, timeout: 20_000 });
    await waitingPolls(b, 1);
    const sent = await get(a, 'consumer/SendMessage', consumer('Sender'), {
      scope: 'All',
      key: 'Hello',
      data: JSON.stringify('world'),
    });
    expect(sent.status).toBe(204);
    const reply = await poll;
    expect(reply.json<MessageRecord[]>().map((m) => m.Data)).toEqual(['world']);
  });

  it('each process reports its listening connection and the lags of notifications and tail reads in its metrics', async () => {
    const text = await metricsText(b);
    expect(text).toMatch(/^hub_postgres_listener_up 1$/m);
    expect(text).toMatch(/^hub_postgres_listener_reconnects 0$/m);
    expect(text).toMatch(/^hub_postgres_tail_reads [1-9]\d*$/m);
    // The push and the send above were announced to B: each notification's lag, and the read it caused.
    expect(text).toMatch(/^hub_postgres_notification_lag_seconds_count ([2-9]|\d{2,})$/m);
    expect(text).toMatch(/^hub_postgres_tail_read_lag_seconds_count ([2-9]|\d{2,})$/m);
  });
});
