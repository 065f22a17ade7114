/** Test support for the store's takes: a signal that never aborts, and a claim that records what it judges. */
import type { DeliveryClaim, PendingDelivery, PendingVerdict } from '../../src/hub/ports/subscriptions.js';

export const signal = () => new AbortController().signal;

/** A take's claim that records the pending deliveries it is shown and answers each with `verdict`. */
export const claim = (
  token: string,
  verdict: PendingVerdict = 'wait',
): DeliveryClaim & { shown: PendingDelivery[] } => {
  const shown: PendingDelivery[] = [];
  return {
    token,
    shown,
    judge: (pending) => {
      shown.push(pending);
      return verdict;
    },
  };
};
