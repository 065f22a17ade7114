/**
 * A take's claim, as data, and the verdict on a pending delivery a take finds: a pure function of the
 * two that the store applies inside its take (hub/polls/deliveries.ts says why deliveries are pending).
 * The store calls nothing of the domain from inside its transaction: it reads the claim, decides with
 * `pendingVerdict`, and returns what it decided (`JudgedPending`) with what it took.
 */

/**
 * A delivery whose answer may still be in flight: a take that delivers records it on its subscription
 * (the cursors before it, a token, the time) until it is settled.
 */
export interface PendingDelivery {
  token: string;
  /** When it was taken, epoch ms. */
  sinceMs: number;
}

/**
 * What a take does about a pending delivery it finds: `delivered` (its answer was written: read on
 * past it), `redeliver` (its answer never went: read it again from the cursors before it), `wait`
 * (not known yet: take nothing, change nothing).
 */
export type PendingVerdict = 'delivered' | 'redeliver' | 'wait';

/**
 * What the domain knows when a take starts, as the store needs it to judge a pending delivery. The
 * collections are read-only views of the domain's own (no copy per take: a wake-up takes a thousand
 * times); a take reads them inside its transaction, as it would have asked the domain then.
 */
export interface DeliveryClaim {
  /** The token the take records with what it delivers (one per poll, so its own earlier takes' too). */
  readonly token: string;
  /** This process's life: the prefix of every token it hands out. */
  readonly life: string;
  /** This life's answers under way, by token (`written`: written whole, not settled yet). */
  readonly answering: ReadonlyMap<string, { readonly written: boolean }>;
  /** This life's tokens whose answer was not written and whose cursors failed to go back. */
  readonly unsent: ReadonlySet<string>;
  /**
   * How long another process's pending delivery may stay unsettled before it counts as lost (a live
   * process settles it in milliseconds); 0: at once (nobody else uses the database).
   */
  readonly lostAfterMs: number;
}

/** A take's verdict on the pending delivery it found, returned with what it took. */
export interface JudgedPending extends PendingDelivery {
  verdict: PendingVerdict;
}

/**
 * The verdict on `pending`, found by a take under `claim` at `now`: its own (an earlier take of this
 * poll, left out as not visible: nothing of it was answered) and any without a claim read on; this
 * life's answer under way is waited for until written; one of this life that has ended was written
 * unless its cursors failed to go back; another life's is lost after `lostAfterMs`.
 */
export function pendingVerdict(
  claim: DeliveryClaim | undefined,
  pending: PendingDelivery,
  now: number,
): PendingVerdict {
  if (!claim || pending.token === claim.token) return 'delivered';
  const answer = claim.answering.get(pending.token);
  if (answer) return answer.written ? 'delivered' : 'wait';
  if (pending.token.startsWith(claim.life)) return claim.unsent.has(pending.token) ? 'redeliver' : 'delivered';
  if (claim.lostAfterMs === 0) return 'redeliver';
  return now >= pending.sinceMs + claim.lostAfterMs ? 'redeliver' : 'wait';
}

/** A take's verdict on its subscription's pending delivery as read from its row (`token` null: none). */
export function judgePending(
  claim: DeliveryClaim | undefined,
  token: string | null,
  sinceMs: number | null,
  now: number,
): JudgedPending | undefined {
  if (token === null) return undefined;
  const pending = { token, sinceMs: sinceMs ?? 0 };
  return { ...pending, verdict: pendingVerdict(claim, pending, now) };
}
