/** The hub's /metrics, and waiting for its long-polls as they count them (hub_waiting_long_polls). */
import { expect } from 'vitest';
import type { Identity } from './testHub.js';
import { ADMIN_KEY, call } from './testHub.js';
import { until } from './until.js';

/** The text of /metrics, read with a management key. */
export async function metricsText(h: { url: string }, accessKey = ADMIN_KEY): Promise<string> {
  return (await fetch(`${h.url}/metrics?SentinelName=Management&PackageName=Prom&AccessKey=${accessKey}`)).text();
}

/** The number of long-polls waiting right now, from /metrics. */
export async function waitingPollCount(h: { url: string }, accessKey = ADMIN_KEY): Promise<number> {
  return Number(/hub_waiting_long_polls (\d+)/.exec(await metricsText(h, accessKey))?.[1]);
}

/** Resolves once exactly `n` long-polls wait. */
export async function waitingPolls(h: { url: string }, n: number, accessKey = ADMIN_KEY): Promise<void> {
  await until(async () => (await waitingPollCount(h, accessKey)) === n);
}

/**
 * A long-poll (GET `action`) whose client leaves once it waits, the only poll of `h` then; resolves once
 * the hub no longer counts it.
 */
export async function leaveWaitingPoll(
  h: { url: string },
  action: string,
  who: Identity,
  query: Record<string, string | number>,
): Promise<void> {
  const leave = new AbortController();
  const left = call(h, 'GET', action, who, { query, signal: leave.signal }).catch(() => 'aborted');
  await waitingPolls(h, 1);
  leave.abort();
  expect(await left).toBe('aborted');
  await waitingPolls(h, 0);
}
