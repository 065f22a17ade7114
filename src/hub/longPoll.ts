import type { Notifier } from './notifier.js';

export class PollAborted extends Error {
  constructor() {
    super('the client went away');
  }
}

/**
 * Holds a poll until `take` finds something or `timeoutMs` passes. The waiter is registered before the
 * first read so a commit between read and wait is not missed. `take` consumes inside its transaction
 * and must throw PollAborted (rolling back) if the client has gone, so nothing is consumed for a
 * response that will not be sent. `settle` runs with the result while the waiter is still registered
 * (the idle sweeper leaves a subscription with a waiter alone). Returns undefined when the client went away.
 */
export async function longPoll<T>(
  notifier: Notifier,
  subscriptionId: string,
  timeoutMs: number,
  abort: AbortSignal,
  take: () => Promise<T[]>,
  settle: (result: T[] | undefined) => Promise<void> = async () => undefined,
): Promise<T[] | undefined> {
  const waiter = notifier.register(subscriptionId);
  const deadline = Date.now() + timeoutMs;
  const wait = async (): Promise<T[] | undefined> => {
    for (;;) {
      if (abort.aborted) return undefined;
      waiter.clearSignal();
      let items: T[];
      try {
        items = await take();
      } catch (error) {
        if (error instanceof PollAborted) return undefined;
        throw error;
      }
      if (items.length > 0) return items;
      const outcome = await waiter.wait(deadline - Date.now(), abort);
      if (outcome === 'aborted') return undefined;
      if (outcome !== 'woken') return [];
    }
  };
  try {
    const result = await wait();
    await settle(result);
    return result;
  } finally {
    notifier.release(subscriptionId, waiter);
  }
}
