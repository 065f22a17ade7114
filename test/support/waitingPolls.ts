/** The hub's /metrics, and waiting for its long-polls as they count them (hub_waiting_long_polls). */
import { ADMIN_KEY } from './testHub.js';
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
