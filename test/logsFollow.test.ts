/**
 * Following the package logs (`management/logs?after=…&timeout=…`) is a long-poll like GetMessages: it
 * waits through the hub's one long-poll primitive and is answered outside Koa, and however it ends it
 * leaves no waiter behind.
 */
import { describe, expect, it } from 'vitest';
import { admin, call, get, pkg, hubsStoppedAfterEach } from './support/testHub.js';
import { leaveWaitingPoll, metricsText, waitingPolls } from './support/waitingPolls.js';

const hub = hubsStoppedAfterEach();
const p1 = pkg('S1', 'P1');

async function lastLogId(h: { url: string }): Promise<number> {
  await get(h, 'platform/WriteLog', p1, { message: 'before' });
  const logs = (await get(h, 'management/logs', admin)).json<{ Id: number }[]>();
  return logs[logs.length - 1].Id;
}

describe('following the package logs', () => {
  it('answers a follow woken by a WriteLog with the entries after the cursor, and leaves no waiter', async () => {
    const h = await hub();
    const after = await lastLogId(h);
    const following = call(h, 'GET', 'management/logs', admin, {
      query: { after, timeout: 10_000 },
      headers: { Origin: 'http://console.example' },
    });
    await waitingPolls(h, 1);
    await get(h, 'platform/WriteLog', p1, { message: 'new', level: 'Warn' });
    const woken = await following;
    expect(woken.status).toBe(200);
    expect(woken.json<{ Message: string; Level: string }[]>().map((l) => [l.Level, l.Message])).toEqual([
      ['Warn', 'new'],
    ]);
    expect(woken.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(woken.headers.get('access-control-allow-origin')).toBe('*');
    await waitingPolls(h, 0);
    expect(await metricsText(h)).toMatch(
      /hub_http_requests_total\{interface="management",action="logs",status="200"\} 2\b/,
    );
  });

  it('answers an empty array when nothing is written before the timeout, and leaves no waiter', async () => {
    const h = await hub();
    const after = await lastLogId(h);
    const timedOut = await call(h, 'GET', 'management/logs', admin, { query: { after, timeout: 1000 } });
    expect(timedOut.status).toBe(200);
    expect(timedOut.text).toBe('[]');
    expect(timedOut.headers.get('content-length')).toBe('2');
    await waitingPolls(h, 0);
    // Nothing was consumed by the wait: the entry written since is there for the next follow.
    await get(h, 'platform/WriteLog', p1, { message: 'later' });
    const next = await get(h, 'management/logs', admin, { after, timeout: 1000 });
    expect(next.json<{ Message: string }[]>().map((l) => l.Message)).toEqual(['later']);
  });

  it('stops waiting when the client leaves', async () => {
    const h = await hub();
    const after = await lastLogId(h);
    await leaveWaitingPoll(h, 'management/logs', admin, { after, timeout: 60_000 });
  });

  it('refuses a bad timeout before waiting', async () => {
    const h = await hub();
    const bad = await get(h, 'management/logs', admin, { after: 1, timeout: 'soon' });
    expect(bad.status).toBe(400);
    expect(bad.json<{ Message: string }>().Message).toContain("'timeout'");
  });
});
