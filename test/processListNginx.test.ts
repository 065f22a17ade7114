/**
 * The console's Server page behind round-robin nginx (issue 30, item 4): two hub processes on one
 * PostgreSQL database, every request through nginx, so successive answers come from either process.
 * Each answer of `management/server/status` is one coherent picture: its cards are the figures of the
 * row marked as the answering process; every row carries its own process's figures (a waiting poll on
 * the process that holds it) and where to reach it; a killed process shows as not answering, then
 * leaves the list after HUB_PROCESS_FORGET_MS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HubProcessRecord } from '../src/http/management/records.js';
import { HUB_VERSION } from '../src/version.js';
import { admin, consumer, get, idOf } from './support/testHub.js';
import { nginxAvailable, startNginxHubs } from './support/nginxHubs.js';
import type { NginxHubs } from './support/nginxHubs.js';
import { postgresServer, testDatabase } from './support/postgres.js';
import type { TestDatabase } from './support/postgres.js';
import { until } from './support/until.js';
import { waitingPolls } from './support/waitingPolls.js';

const server = await postgresServer();
const runs = server.available && nginxAvailable();

interface Status {
  Version: string;
  StartedAt: string;
  WaitingLongPolls: number;
  RequestsTotal: number;
  AuthFailures: number;
  Processes: HubProcessRecord[];
}

/** Short so that the test need not wait long: a heartbeat every 0.5 s, alive within 1.5 s, forgotten after 4 s. */
const HEARTBEAT_MS = 500;
const FORGET_MS = 4000;

describe.skipIf(!runs)('the process list behind nginx, two processes on PostgreSQL', () => {
  let database: TestDatabase;
  let cluster: NginxHubs;

  beforeAll(async () => {
    database = await testDatabase(server);
    cluster = await startNginxHubs(database.url, 2, {
      HUB_PROCESS_HEARTBEAT_MS: String(HEARTBEAT_MS),
      HUB_PROCESS_FORGET_MS: String(FORGET_MS),
    });
  }, 240_000);
  afterAll(async () => {
    await cluster?.stop();
    await database?.drop();
  });

  const status = async (): Promise<Status> => {
    const reply = await get(cluster, 'management/server/status', admin);
    expect(reply.status, reply.text).toBe(200);
    return reply.json<Status>();
  };
  /** The row of the process listening at `url`. */
  const rowOf = (answer: Status, url: string) => answer.Processes.find((p) => p.Addresses.includes(url));

  it("every answer's cards are the figures of the row it marks as serving, whichever process answers", async () => {
    const servedBy = new Set<string>();
    // Until both processes have answered (round-robin alternates them).
    for (let i = 0; i < 6 || servedBy.size < 2; i++) {
      const answer = await status();
      expect(answer.Processes).toHaveLength(2);
      const [self, ...others] = answer.Processes.filter((p) => p.Self);
      expect(others).toEqual([]);
      expect(answer).toMatchObject({
        Version: self.Version,
        StartedAt: self.StartedAt,
        WaitingLongPolls: self.WaitingLongPolls,
        RequestsTotal: self.RequestsTotal,
        AuthFailures: self.AuthFailures,
      });
      servedBy.add(self.Addresses.join());
    }
    // Each marked itself, by the addresses it listens on.
    expect([...servedBy].sort()).toEqual(cluster.hubs.map((h) => h.url).sort());
  });

  it('each row says where to reach its process, and its own figures', async () => {
    let answer = await status();
    // Both served requests above: the other's count arrives with its next heartbeat.
    await until(async () => (answer = await status()).Processes.every((p) => p.RequestsTotal > 0));
    for (const hub of cluster.hubs) {
      expect(rowOf(answer, hub.url), `a row for ${hub.url}`).toMatchObject({
        Addresses: [hub.url],
        Pid: hub.process?.pid,
        Alive: true,
        Version: HUB_VERSION,
      });
    }
  });

  it('a waiting poll is counted on the process that holds it, in every answer, whichever process serves it', async () => {
    const [holder, other] = cluster.hubs;
    const app = consumer('Watcher');
    const id = idOf(await get(holder, 'consumer/SubscribeToMessage', app));
    const poll = get(holder, 'consumer/GetMessages', app, { subscriptionId: id, timeout: 60_000 });
    await waitingPolls(holder, 1);
    // Served by the holder, the count is its own now; by the other, the holder's row as of its next heartbeat.
    const counted = new Map<string, Status>();
    await until(async () => {
      const answer = await status();
      if (rowOf(answer, holder.url)?.WaitingLongPolls === 1)
        counted.set(answer.Processes.find((p) => p.Self)!.Addresses[0], answer);
      return counted.size === 2;
    });
    for (const answer of counted.values()) {
      expect(rowOf(answer, other.url)?.WaitingLongPolls).toBe(0);
      expect(answer.Processes.reduce((sum, p) => sum + p.WaitingLongPolls, 0)).toBe(1);
    }
    expect(counted.get(holder.url)?.WaitingLongPolls).toBe(1);
    expect(counted.get(other.url)?.WaitingLongPolls).toBe(0);
    await get(cluster, 'consumer/SendMessage', consumer('Sender'), { scope: 'All', key: 'K', data: '1' });
    expect((await poll).status).toBe(200);
  });

  it(`a killed process shows as not answering, then leaves the list ${FORGET_MS / 1000} s after its last heartbeat`, async () => {
    const killed = cluster.hubs[1];
    const killedId = rowOf(await status(), killed.url)!.Id;
    await cluster.kill(1);
    const seen: string[] = [];
    await until(async () => {
      const row = (await status()).Processes.find((p) => p.Id === killedId);
      const state = row === undefined ? 'gone' : row.Alive ? 'alive' : 'not answering';
      if (seen.at(-1) !== state) seen.push(state);
      return state === 'gone';
    });
    expect(seen.filter((s) => s !== 'alive')).toEqual(['not answering', 'gone']);
    // The survivor alone, answering every request.
    const answer = await status();
    expect(answer.Processes.map((p) => p.Addresses)).toEqual([[cluster.hubs[0].url]]);
  });
});
