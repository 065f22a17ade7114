/**
 * Pending deliveries on SQLite (hub/polls/deliveries.ts): the settling of a subscription's pending
 * delivery, consumed (the token goes) or put back (the cursors return to before it), only while that
 * token is the pending one. A take leaves one pending and judges the one it finds (takes/stateObjectTake.ts,
 * takes/messageTake.ts). A written answer's delivery is consumed by the next poll of its subscription (its
 * first read, findOwned, or its take), or at a graceful shutdown.
 */
import type Sqlite from 'better-sqlite3';
import type { TransactionBatcher } from './database/batch.js';
import type { TakeMemory } from './takes/takeMemory.js';

export class SqlitePendingDeliveries {
  private readonly restoreFilters;
  private readonly consumed;
  private readonly putBack;
  private readonly consumeLife;

  constructor(
    sqlite: Sqlite.Database,
    private readonly batcher: TransactionBatcher,
    /**
     * Forgets what a take remembers of a subscription whose cursors go back (takes/takeMemory.ts): a
     * guard, as memory keeps no subscription with a delivery pending.
     */
    private readonly takes: Pick<TakeMemory, 'forget'>,
  ) {
    this.restoreFilters = sqlite.prepare(
      'update state_object_filters set read_seq = redeliver_seq where subscription_id = cast(? as text) and redeliver_seq is not null',
    );
    this.consumed = sqlite.prepare('update subscriptions set pending_token = null where id = ? and pending_token = ?');
    this.putBack = sqlite.prepare(`update subscriptions set read_message_id = coalesce(redeliver_from, read_message_id),
      pending_token = null where id = ? and pending_token = ?`);
    this.consumeLife = sqlite.prepare(`update subscriptions set pending_token = null
      where substr(pending_token, 1, length(:life)) = :life and pending_token not in (select value from json_each(:unsettled))`);
  }

  /** SubscriptionStore.settle: consumed when written, else the cursors go back; only while `token` is pending. */
  settle(id: string, token: string, written: boolean): Promise<void> {
    return this.batcher.run(() => {
      if (written) {
        this.consumed.run(id, token);
      } else if (this.putBack.run(id, token).changes > 0) {
        this.restoreFilters.run(id);
        this.takes.forget(id);
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
