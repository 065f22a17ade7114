import http from 'node:http';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { ADMIN_KEY, DEV_KEY, call, consumer, get, idOf, pkg, post, hubsStoppedAfterEach } from './support/testHub.js';
import { until } from './support/until.js';
import { metricsText, waitingPolls } from './support/waitingPolls.js';

const hub = hubsStoppedAfterEach();

/** A GET from a chosen loopback source address; resolves with status and elapsed ms. */
function getFrom(
  localAddress: string,
  port: number,
  path: string,
  signal?: AbortSignal,
): Promise<{ status: number; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, localAddress, agent: false, signal }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: Date.now() - started }));
    });
    req.on('error', reject);
  });
}

/** The failed authentications the hub has counted (hub_auth_failures_total). */
const authFailures = async (h: { url: string }) =>
  Number(/^hub_auth_failures_total (\d+)$/m.exec(await metricsText(h))?.[1]);

/**
 * Whether a refusal to `other` is answered while one to `slowed`, its second failure, is still held back
 * (the hub delays it by a step of a minute): by event, not by a clock. `refuse` sends one refused request
 * from a client; the held one is left with `signal`.
 */
async function answeredWhileHeld(
  h: { url: string },
  refuse: (client: string, signal?: AbortSignal) => Promise<{ status: number }>,
  slowed: string,
  other: string,
): Promise<boolean> {
  expect((await refuse(slowed)).status).toBe(403);
  const leave = new AbortController();
  let held = true;
  const second = refuse(slowed, leave.signal).then(
    () => (held = false),
    () => {},
  );
  await until(async () => (await authFailures(h)) === 2);
  try {
    expect((await refuse(other)).status).toBe(403);
    return held;
  } finally {
    leave.abort();
    await second;
  }
}

/** Failed authentications delayed by a minute from the second on: longer than a test may run. */
const MINUTE_STEP = { authFailureDelayMs: 0, authFailureStepMs: 60_000, authFailureMaxDelayMs: 60_000 };

describe('limits that keep one client from hurting the others', () => {
  it('caps the long-polls waiting per credential with a JSON 429', async () => {
    const h = await hub({ options: { maxPollsPerCredential: 2 } });
    const ids = await Promise.all(
      ['A', 'B', 'C'].map(async (n) => idOf(await get(h, 'consumer/SubscribeToMessage', consumer(n)))),
    );
    const waiting = ids
      .slice(0, 2)
      .map((id, i) => get(h, 'consumer/GetMessages', consumer(['A', 'B'][i]), { subscriptionId: id, timeout: 1000 }));
    await waitingPolls(h, 2);
    const third = await get(h, 'consumer/GetMessages', consumer('C'), { subscriptionId: ids[2], timeout: 1000 });
    expect(third.status).toBe(429);
    expect(third.json<{ Message: string }>().Message).toMatch(/long-polls waiting/);
    // Another credential is not affected.
    const other = idOf(await get(h, 'platform/SubscribeToMessage', pkg('S2', 'P1', 'other-key-0001')));
    expect(
      (await get(h, 'platform/GetMessages', pkg('S2', 'P1', 'other-key-0001'), { subscriptionId: other, timeout: 0 }))
        .status,
    ).toBe(200);
    expect((await Promise.all(waiting)).map((r) => r.status)).toEqual([200, 200]);
    expect((await get(h, 'consumer/GetMessages', consumer('C'), { subscriptionId: ids[2], timeout: 0 })).status).toBe(
      200,
    );
    // Refused polls (429, an unknown subscription) take no slot and give none back: still exactly two.
    for (let i = 0; i < 3; i++) {
      expect(
        (
          await get(h, 'consumer/GetMessages', consumer('C'), {
            subscriptionId: '00000000-0000-0000-0000-000000000009',
            timeout: 1000,
          })
        ).status,
      ).toBe(500);
    }
    const again = ids
      .slice(0, 2)
      .map((id, i) => get(h, 'consumer/GetMessages', consumer(['A', 'B'][i]), { subscriptionId: id, timeout: 1000 }));
    await waitingPolls(h, 2);
    expect(
      (await get(h, 'consumer/GetMessages', consumer('C'), { subscriptionId: ids[2], timeout: 1000 })).status,
    ).toBe(429);
    expect((await Promise.all(again)).map((r) => r.status)).toEqual([200, 200]);
  });

  it('slows repeated authentication failures from one address, not from another', async () => {
    const h = await hub({ options: { authFailureDelayMs: 0, authFailureStepMs: 400, authFailureMaxDelayMs: 2000 } });
    const bad = `/rest/consumer/CheckAccess?SentinelName=Consumer&PackageName=X&AccessKey=wrong`;
    const first = await getFrom('127.0.0.1', h.port, bad);
    await getFrom('127.0.0.1', h.port, bad);
    const third = await getFrom('127.0.0.1', h.port, bad);
    expect([first.status, third.status]).toEqual([403, 403]);
    expect(third.ms).toBeGreaterThanOrEqual(780);
    // Another address is answered at once, while this one's next failure is held back a minute.
    const slow = await hub({ options: MINUTE_STEP });
    const refuse = (address: string, signal?: AbortSignal) => getFrom(address, slow.port, bad, signal);
    expect(await answeredWhileHeld(slow, refuse, '127.0.0.1', '127.0.0.2')).toBe(true);
    const good = await getFrom(
      '127.0.0.1',
      h.port,
      `/rest/consumer/CheckAccess?SentinelName=Consumer&PackageName=X&AccessKey=${DEV_KEY}`,
    );
    expect(good.status).toBe(200);
  });

  it('behind a trusted proxy, counts failures per X-Forwarded-For address', async () => {
    const h = await hub({
      options: { authFailureDelayMs: 0, authFailureStepMs: 500, authFailureMaxDelayMs: 2000, trustProxy: true },
    });
    const bad = `${h.url}/rest/consumer/CheckAccess?SentinelName=Consumer&PackageName=X&AccessKey=wrong`;
    const timed = async (forwardedFor: string) => {
      const started = Date.now();
      const response = await fetch(bad, { headers: { 'X-Forwarded-For': forwardedFor } });
      await response.text();
      return { status: response.status, ms: Date.now() - started };
    };
    await timed('client-a');
    const second = await timed('client-a');
    expect(second.status).toBe(403);
    expect(second.ms).toBeGreaterThanOrEqual(480);
    // Another client is answered at once, while client-a's next failure is held back a minute.
    const slow = await hub({ options: { ...MINUTE_STEP, trustProxy: true } });
    const refuse = (client: string, signal?: AbortSignal) =>
      fetch(`${slow.url}/rest/consumer/CheckAccess?SentinelName=Consumer&PackageName=X&AccessKey=wrong`, {
        headers: { 'X-Forwarded-For': client },
        signal,
      });
    expect(await answeredWhileHeld(slow, refuse, 'client-a', 'client-b')).toBe(true);
  });

  it('serves a normal request while hundreds of connections send their headers slowly', async () => {
    // Their headers deadline outlives the test: the hub never drops them by itself here.
    const h = await hub({ options: { bodyTimeoutMs: 120_000 } });
    const sockets: net.Socket[] = [];
    let closed = 0;
    const connected = Array.from({ length: 300 }, () => {
      const socket = net.connect(h.port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.on('close', () => closed++);
      sockets.push(socket);
      return new Promise((resolve) => socket.once('connect', resolve));
    });
    await Promise.all(connected);
    for (const socket of sockets) socket.write('GET /rest/consumer/CheckAccess HTTP/1.1\r\nHost: x\r\n');
    const drip = setInterval(() => sockets.forEach((s) => s.write('X-Slow: 1\r\n')), 100);
    try {
      // Accepted after all of them (the kernel queues connections in order) and answered while every one
      // of them is still open and unfinished: the hub did not wait for their headers.
      expect((await get(h, 'consumer/CheckAccess', consumer())).status).toBe(200);
      expect(closed).toBe(0);
      expect(sockets.every((s) => s.readyState === 'open' && s.bytesRead === 0)).toBe(true);
    } finally {
      clearInterval(drip);
      sockets.forEach((s) => s.destroy());
    }
  });
});

describe('metrics', () => {
  it('are protected by a management credential and count requests, polls and objects', async () => {
    const h = await hub();
    expect((await fetch(`${h.url}/metrics`)).status).toBe(403);
    await get(h, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'T', value: 1 });
    const id = idOf(await get(h, 'consumer/SubscribeToMessage', consumer()));
    const waiting = get(h, 'consumer/GetMessages', consumer(), { subscriptionId: id, timeout: 2000 });
    await waitingPolls(h, 1);
    const response = await fetch(`${h.url}/metrics?SentinelName=Management&PackageName=Prom&AccessKey=${ADMIN_KEY}`);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toMatch(/hub_http_requests_total\{interface="platform",action="pushstateobject",status="204"\} 1/);
    // The push's duration: counted once, in cumulative buckets up to +Inf, with a sum.
    const push = 'interface="platform",action="pushstateobject"';
    const buckets = [
      ...text.matchAll(new RegExp(`^hub_http_request_duration_seconds_bucket\\{${push},le="([^"]+)"\\} (\\d+)$`, 'gm')),
    ];
    expect(buckets.map(([, le]) => le)).toEqual([
      '0.001',
      '0.005',
      '0.01',
      '0.025',
      '0.05',
      '0.1',
      '0.5',
      '1',
      '5',
      '30',
      '120',
      '+Inf',
    ]);
    const counts = buckets.map(([, , n]) => Number(n));
    expect(counts.every((n, i) => i === 0 || n >= counts[i - 1])).toBe(true);
    expect(counts.at(-1)).toBe(1);
    expect(text).toContain(`hub_http_request_duration_seconds_count{${push}} 1\n`);
    expect(
      Number(new RegExp(`^hub_http_request_duration_seconds_sum\\{${push}\\} (\\S+)$`, 'm').exec(text)?.[1]),
    ).toBeGreaterThan(0);
    expect(text).toMatch(/hub_waiting_long_polls 1/);
    expect(text).toMatch(/hub_state_objects 1/);
    expect(text).toMatch(/hub_subscriptions\{kind="messages"\} 1/);
    expect(text).toMatch(/hub_commit_duration_seconds_count [1-9]\d*/);
    // The push and the poll's subscription check each rode a group commit.
    expect(text).toMatch(/hub_batch_pieces_count [1-9]\d*/);
    await waiting;
  });

  it('label a request with the action that answered it, or unmatched for one refused before its action', async () => {
    const h = await hub({ options: { metricsOpen: true } });
    const pushed = (name: string) => ({ name, value: 1 });
    // The same action in any case and with a trailing slash, an authenticated POST, then refusals.
    expect((await get(h, 'platform/PushStateObject', pkg('S1', 'P1'), pushed('A'))).status).toBe(204);
    expect((await get(h, 'platform/pushstateobject/', pkg('S1', 'P1'), pushed('B'))).status).toBe(204);
    expect((await get(h, 'constellation/PUSHSTATEOBJECT', pkg('S1', 'P1'), pushed('C'))).status).toBe(204);
    const descriptor = await post(h, 'platform/DeclarePackageDescriptor', pkg('S1', 'P1'), {});
    expect((await get(h, 'platform/PushStateObject', pkg('S1', 'P1', 'wrong-key'), pushed('D'))).status).toBe(403);
    expect((await call(h, 'HEAD', 'platform/PushStateObject', pkg('S1', 'P1'), { query: pushed('E') })).status).toBe(
      405,
    );
    expect((await get(h, 'platform/DeclarePackageDescriptor', pkg('S1', 'P1'))).status).toBe(405);
    expect((await get(h, 'platform/NoSuchAction', pkg('S1', 'P1'))).status).toBe(404);
    const text = await (await fetch(`${h.url}/metrics`)).text();
    const counted = [...text.matchAll(/^hub_http_requests_total\{(.*)\} (\d+)$/gm)]
      .map(([, labels, n]) => `${labels} ${n}`)
      .filter((line) => !line.includes('interface="other"'));
    expect(counted.sort()).toEqual(
      [
        `interface="platform",action="pushstateobject",status="204" 3`,
        `interface="platform",action="declarepackagedescriptor",status="${descriptor.status}" 1`,
        'interface="platform",action="unmatched",status="403" 1',
        'interface="platform",action="unmatched",status="405" 2',
        'interface="platform",action="unmatched",status="404" 1',
      ].sort(),
    );
  });

  it('can be opened to scrapers without a key', async () => {
    const h = await hub({ options: { metricsOpen: true } });
    expect((await fetch(`${h.url}/metrics`)).status).toBe(200);
  });
});
