import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Resolves once `condition` holds, checking it every 10 ms: a test waits for the event it expects, and
 * only its timeout (a hang) bounds the wait.
 */
export async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await sleep(10);
}
