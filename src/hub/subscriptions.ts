/** Opening and checking subscriptions on behalf of a caller; shared by StateObjects and messages. */
import { randomUUID } from 'node:crypto';
import type { SubscriptionRow } from '../db/schema.js';
import { badRequest, subscriptionLost } from '../errors.js';
import type { TransactionBatcher } from '../db/batch.js';
import type { SubscriptionStatements } from '../store/subscriptions.js';
import type { Caller, CallerDirectory } from './caller.js';
import { longPoll, PollAborted } from './longPoll.js';
import type { Notifier } from './notifier.js';
import type { PollGate } from './pollGate.js';

export type SubscriptionKind = SubscriptionRow['kind'];

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isGuid = (text: string) => GUID.test(text);

export class Subscriptions {
  constructor(
    private readonly batcher: TransactionBatcher,
    private readonly statements: SubscriptionStatements,
    private readonly callers: CallerDirectory,
    private readonly notifier: Notifier,
    private readonly gate: PollGate,
  ) {}

  private owns(row: SubscriptionRow, connectionId: string, caller: Caller, kind: SubscriptionKind): boolean {
    return row.kind === kind && row.owner_connection_id === connectionId && row.credential_name === caller.credential.name;
  }

  /**
   * Runs `work` in one group-commit transaction with the id to use: the caller's own subscription when
   * `requestedId` is one; the same id re-created empty when it is unknown (it expired); a new id
   * otherwise. Like every batch piece, `work` only touches the database and may run twice.
   */
  async open<T>(caller: Caller, kind: SubscriptionKind, requestedId: string | undefined, work: (id: string) => T): Promise<T> {
    if (requestedId !== undefined && !isGuid(requestedId)) {
      throw badRequest('InvalidSubscriptionId', `subscriptionId '${requestedId}' is not a GUID.`);
    }
    const connectionId = await this.callers.connectionId(caller);
    return this.batcher.run(() => work(this.choose(caller, connectionId, kind, requestedId)));
  }

  private choose(caller: Caller, connectionId: string, kind: SubscriptionKind, requestedId: string | undefined): string {
    const now = Date.now();
    if (requestedId) {
      const row = this.statements.find(requestedId);
      if (row && this.owns(row, connectionId, caller, kind)) {
        this.statements.touched(row.id, now);
        return row.id;
      }
      if (!row) {
        this.insert(requestedId, kind, connectionId, caller, now);
        return requestedId;
      }
    }
    const id = randomUUID();
    this.insert(id, kind, connectionId, caller, now);
    return id;
  }

  private insert(id: string, kind: SubscriptionKind, owner: string, caller: Caller, now: number): void {
    this.statements.insert({
      id,
      kind,
      owner_connection_id: owner,
      credential_name: caller.credential.name,
      created_ms: now,
      last_active_ms: now,
    });
  }

  /** The caller's subscription of that kind, or the "subscription lost" 500 firmware re-subscribes on. */
  async requireOwned(caller: Caller, id: string | undefined, kind: SubscriptionKind): Promise<SubscriptionRow> {
    if (!id) throw badRequest('MissingParameter', "The parameter 'subscriptionId' is required.");
    const connectionId = isGuid(id) ? await this.callers.knownConnectionId(caller) : undefined;
    const row = connectionId
      ? await this.batcher.run(() => {
          const found = this.statements.find(id);
          if (found && this.owns(found, connectionId, caller, kind)) {
            this.statements.touched(id, Date.now());
            return found;
          }
          return undefined;
        })
      : undefined;
    if (!row) throw subscriptionLost(id);
    return row;
  }

  /**
   * Long-polls the caller's subscription of `kind`. `take` runs in a batch transaction and consumes what
   * it returns; that is rolled back if the client has gone meanwhile. Undefined when the client went away.
   */
  async poll<T>(
    caller: Caller,
    id: string | undefined,
    kind: SubscriptionKind,
    timeoutMs: number,
    abort: AbortSignal,
    take: (subscriptionId: string) => T[],
  ): Promise<T[] | undefined> {
    const subscription = await this.requireOwned(caller, id, kind);
    return this.gate.hold(caller.credential.name, () =>
      longPoll(
        this.notifier,
        subscription.id,
        timeoutMs,
        abort,
        () =>
          this.batcher.run(() => {
            const items = take(subscription.id);
            if (items.length > 0) {
              if (abort.aborted) throw new PollAborted();
              // Active now: in the transaction that consumed, so an answer waits for no second commit.
              this.statements.touched(subscription.id, Date.now());
            }
            return items;
          }),
        // An empty answer (timeout, superseded, client gone) ends a wait of up to two minutes: active
        // now, recorded before the waiter goes so the idle sweeper cannot take the subscription between.
        async (result) => {
          if (!result || result.length === 0) await this.touch(subscription.id);
        },
      ),
    );
  }

  /** Marks the subscription active now (its idle time starts again). */
  touch(id: string): Promise<void> {
    return this.batcher.run(() => this.statements.touched(id, Date.now()));
  }
}
