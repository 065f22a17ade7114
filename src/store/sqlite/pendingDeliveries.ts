/**
 * Pending deliveries on SQLite (hub/polls/deliveries.ts): the StateObject side of a take's claim (each filter's
 * cursor before the delivery, the token on the subscription) and the settling of any subscription's
 * pending delivery: consumed (the token goes), or put back (the cursors return to before it). A written
 * answer's delivery is consumed by the next poll of its subscription (its first read, findOwned, or
 * its take), or at a graceful shutdown.
 * `…Now` methods run inside the caller's transaction.
 */
import type Sqlite from 'better-sqlite3';
import type { TransactionBatcher } from './database/batch.js';
import type { DeliveryClaim, PendingVerdict } from '../../hub/ports/subscriptions.js';
import { pendingVerdict } from '../../hub/ports/subscriptions.js';

export class SqlitePendingDeliveries {
  private readonly restoreFilters;
  private readonly deliverFilters;
  private readonly deliverSubscription;
  private readonly clear;
  private readonly consumed;
  private readonly putBack;
  private readonly consumeLife;

  constructor(
    sqlite: Sqlite.Database,
    private readonly batcher: TransactionBatcher,
  ) {
    this.restoreFilters = sqlite.prepare(
      'update state_object_filters set read_seq = redeliver_seq where subscription_id = ? and redeliver_seq is not null',
    );
    this.deliverFilters = sqlite.prepare(
      'update state_object_filters set redeliver_seq = read_seq, read_seq = max(read_seq, ?) where subscription_id = ?',
    );
    this.deliverSubscription = sqlite.prepare(
      'update subscriptions set last_active_ms = ?, pending_token = ?, pending_ms = ? where id = ?',
    );
    this.clear = sqlite.prepare('update subscriptions set pending_token = null where id = ?');
    this.consumed = sqlite.prepare('update subscriptions set pending_token = null where id = ? and pending_token = ?');
    this.putBack = sqlite.prepare(`update subscriptions set read_message_id = coalesce(redeliver_from, read_message_id),
      pending_token = null where id = ? and pending_token = ?`);
    this.consumeLife = sqlite.prepare(`update subscriptions set pending_token = null
      where substr(pending_token, 1, length(:life)) = :life and pending_token not in (select value from json_each(:unsettled))`);
  }

  /**
   * Inside a StateObject take: the claim's verdict on the subscription's pending delivery, `token` and
   * `sinceMs` as the take read them with the filters (undefined: none). On `redeliver` the filters'
   * cursors go back before it (the take moves its own copies the same way). Any verdict but `wait` ends
   * it: the take delivering again (deliverFiltersNow) or, delivering nothing, `endedNow`.
   */
  judgeFiltersNow(
    subscription: string,
    claim: DeliveryClaim | undefined,
    token: string | null,
    sinceMs: number | null,
  ): PendingVerdict | undefined {
    const verdict = pendingVerdict(claim, token, sinceMs);
    if (verdict === 'redeliver') this.restoreFilters.run(subscription);
    return verdict;
  }

  /** Inside a StateObject take that delivered nothing after judging a pending delivery: it has ended. */
  endedNow(subscription: string): void {
    this.clear.run(subscription);
  }

  /**
   * Inside a StateObject take that delivers: every cursor moves to `seq` at least, the move pending under
   * the claim (in place of any pending delivery judged before).
   */
  deliverFiltersNow(subscription: string, seq: number, claim: DeliveryClaim | undefined, now: number): void {
    this.deliverFilters.run(seq, subscription);
    this.deliverSubscription.run(now, claim?.token ?? null, now, subscription);
  }

  /** SubscriptionStore.settle: consumed when written, else the cursors go back; only while `token` is pending. */
  settle(id: string, token: string, written: boolean): Promise<void> {
    return this.batcher.run(() => {
      if (written) {
        this.consumed.run(id, token);
      } else if (this.putBack.run(id, token).changes > 0) {
        this.restoreFilters.run(id);
      }
    });
  }

  /** SubscriptionStore.consumeWritten: one statement over every subscription (a graceful shutdown). */
  consumeWritten(life: string, unsettled: string[]): Promise<void> {
    return this.batcher.run(() => {
      this.consumeLife.run({ life, unsettled: JSON.stringify(unsettled) });
    });
  }
}
