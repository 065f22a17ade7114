/**
 * The hub processes sharing a store (`GET management/server/processes`, hub/processRegistry.ts): on
 * SQLite the one process; on PostgreSQL every process that heartbeats into the database, a silent one
 * shown as not alive, one silent for a minute (HUB_PROCESS_FORGET_MS) no longer listed and removed, one
 * stopped cleanly gone. test/processListNginx.test.ts has the same behind nginx.
 */
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HubProcessRecord } from '../src/http/management/records.js';
import { HUB_VERSION } from '../src/version.js';
import { admin, consumer, get, idOf, startTestHub, hubsOn } from './support/testHub.js';
import type { TestHub } from './support/testHub.js';
import { postgresServer, testDatabase, testPool } from './support/postgres.js';
import type { TestDatabase } from './support/postgres.js';
import { waitingPolls } from './support/waitingPolls.js';
import { until } from './support/until.js';

const server = await postgresServer();

const processes = async (hub: TestHub) => {
  const reply = await get(hub, 'management/server/processes', admin);
  expect(reply.status).toBe(200);
  return reply.json<{ Processes: HubProcessRecord[] }>().Processes;
};

describe('the process list on SQLite', () => {
  let hub: TestHub;
  beforeAll(async () => {
    hub = await startTestHub();
  });
  afterAll(async () => {
    await hub?.stop();
  });

  it('is this one process, alive, with its waiting long-polls counted now', async () => {
    const app = consumer('Watcher');
    const id = idOf(await get(hub, 'consumer/SubscribeToMessage', app));
    const poll = get(hub, 'consumer/GetMessages', app, { subscriptionId: id, timeout: 20_000 });
    await waitingPolls(hub, 1);
    const [only, ...others] = await processes(hub);
    expect(others).toEqual([]);
    expect(only).toMatchObject({
      Host: os.hostname(),
      Pid: process.pid,
      Addresses: [hub.url],
      Version: HUB_VERSION,
      Alive: true,
      WaitingLongPolls: 1,
      AuthFailures: 0,
      Self: true,
    });
    expect(only.RequestsTotal).toBeGreaterThan(0);
    expect(Date.parse(only.StartedAt)).toBeLessThanOrEqual(Date.parse(only.LastHeartbeat));
    await get(hub, 'consumer/SendMessage', consumer('Sender'), { scope: 'All', key: 'K', data: '1' });
    expect((await poll).status).toBe(200);
  });

  it("counts this process's requests and refused authentications, as the status's cards do", async () => {
    const before = (await processes(hub))[0];
    expect((await get(hub, 'management/server/processes', consumer())).status).toBe(403);
    const after = (await processes(hub))[0];
    // The 403 and the first list were answered in between.
    expect(after.RequestsTotal).toBe(before.RequestsTotal + 2);
    expect(after.AuthFailures).toBe(before.AuthFailures + 1);
    const status = (await get(hub, 'management/server/status', admin)).json<Record<string, unknown>>();
    const [self] = status.Processes as HubProcessRecord[];
    expect(status).toMatchObject({
      Version: self.Version,
      StartedAt: self.StartedAt,
      RequestsTotal: self.RequestsTotal,
      AuthFailures: self.AuthFailures,
      WaitingLongPolls: self.WaitingLongPolls,
    });
    expect(self.RequestsTotal).toBe(after.RequestsTotal + 1);
  });
});

describe.skipIf(!server.available)('the process list on PostgreSQL', () => {
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

  it("lists every process on the database, from any of them; another's waiting polls as of its last heartbeat", async () => {
    const fromA = await processes(a);
    const fromB = await processes(b);
    expect(fromA.map((p) => p.Id).sort()).toEqual(fromB.map((p) => p.Id).sort());
    expect(fromA).toHaveLength(2);
    expect(fromA.every((p) => p.Alive && p.Version === HUB_VERSION && p.Pid === process.pid)).toBe(true);
    expect(fromA.filter((p) => p.Self)).toHaveLength(1);
    const bId = fromB.find((p) => p.Self)!.Id;

    const app = consumer('Watcher');
    const id = idOf(await get(b, 'consumer/SubscribeToMessage', app));
    const poll = get(b, 'consumer/GetMessages', app, { subscriptionId: id, timeout: 30_000 });
    await waitingPolls(b, 1);
    // B's next heartbeat (every 5 s) carries its count to the database.
    await until(async () => (await processes(a)).find((p) => p.Id === bId)?.WaitingLongPolls === 1);
    await get(a, 'consumer/SendMessage', consumer('Sender'), { scope: 'All', key: 'K', data: '1' });
    expect((await poll).status).toBe(200);
  });

  it('shows a process whose heartbeat stopped as not alive, forgets one silent for long, and drops one that stopped', async () => {
    const pool = testPool(database.url, 1);
    try {
      const insert = (id: string, silentMs: number) =>
        pool.query(
          `insert into hub_processes (id, host, pid, version, started_ms, heartbeat_ms, waiting_polls)
           values ($1, 'elsewhere', 4242, '0.0.1', 1, (extract(epoch from now()) * 1000)::bigint - $2, 3)`,
          [id, silentMs],
        );
      await insert('silent-for-20-s', 20_000);
      await insert('silent-for-2-minutes', 120_000);
      const listed = await processes(a);
      // A row written by a process of the version before the addresses and counts: none of them.
      expect(listed.find((p) => p.Id === 'silent-for-20-s')).toMatchObject({
        Host: 'elsewhere',
        Pid: 4242,
        Addresses: [],
        Alive: false,
        WaitingLongPolls: 3,
        RequestsTotal: 0,
        Self: false,
      });
      // Silent for longer than HUB_PROCESS_FORGET_MS (1 minute): no longer listed…
      expect(listed.map((p) => p.Id)).not.toContain('silent-for-2-minutes');
      // …and removed by the next heartbeat of any process (a start is one).
      const c = await startTestHub({ options: { databaseUrl: database.url } });
      const cId = (await processes(c)).find((p) => p.Self)!.Id;
      expect((await processes(a)).map((p) => p.Id)).toContain(cId);
      const { rows } = await pool.query<{ id: string }>('select id from hub_processes order by id');
      expect(rows.map((r) => r.id)).toContain('silent-for-20-s');
      expect(rows.map((r) => r.id)).not.toContain('silent-for-2-minutes');
      await c.stop();
      expect((await processes(a)).map((p) => p.Id)).not.toContain(cId);
    } finally {
      await pool.end();
    }
  });
});
