/** Waiting for the hub's long-polls as its metrics count them (hub_waiting_long_polls). */
import { ADMIN_KEY } from './testHub.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The number of long-polls waiting right now, from /metrics. */
export async function waitingPollCount(h: { url: string }): Promise<number> {
  const text = await (
    await fetch(`${h.url}/metrics?SentinelName=Management&PackageName=Prom&AccessKey=${ADMIN_KEY}`)
  ).text();
  return Number(/hub_waiting_long_polls (\d+)/.exec(text)?.[1]);
}

/** Resolves once exactly `n` long-polls wait (checked every 20 ms for up to 5 s); throws otherwise. */
export async function waitingPolls(h: { url: string }, n: number): Promise<void> {
  let count = NaN;
  for (let i = 0; i < 250; i++) {
    count = await waitingPollCount(h);
    if (count === n) return;
    await sleep(20);
  }
  throw new Error(`the number of waiting polls never became ${n} (last seen: ${count})`);
}
