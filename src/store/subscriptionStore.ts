/**
 * Opening, finding and touching subscriptions, each in a group-commit transaction (db/batch.ts): a
 * StateObject subscription with its filter, a message subscription with its cursor at the end of the
 * log and its joined groups. At most `maxPerCredential` subscriptions per credential.
 */
import { randomUUID } from 'node:crypto';
import type Sqlite from 'better-sqlite3';
import type { TransactionBatcher } from '../db/batch.js';
import type { SubscriptionRow } from '../db/schema.js';
import { HubError } from '../errors.js';
import type { Interest, OpenedSubscription, StateObjectPatterns, SubscriptionKind, SubscriptionOwner, SubscriptionRegistry } from './engine.js';
import type { MessageStore } from './messageStore.js';
import type { StateObjectStore } from './stateObjectStore.js';

export class SubscriptionStore implements SubscriptionRegistry {
  private readonly select;
  private readonly touch;
  private readonly insertRow;
  private readonly countOwned;

  constructor(
    sqlite: Sqlite.Database,
    private readonly batcher: TransactionBatcher,
    private readonly stateObjects: StateObjectStore,
    private readonly messages: MessageStore,
    private readonly maxPerCredential: number,
  ) {
    this.select = sqlite.prepare('select * from subscriptions where id = ?');
    this.touch = sqlite.prepare('update subscriptions set last_active_ms = ? where id = ?');
    this.insertRow = sqlite.prepare(`insert into subscriptions (id, kind, owner_connection_id, credential_name, created_ms, last_active_ms, read_message_id)
      values (?, ?, ?, ?, ?, ?, ?)`);
    this.countOwned = sqlite.prepare('select count(*) from subscriptions where credential_name = ?').pluck();
  }

  /** Opens (or reuses) a StateObject subscription and adds the filter to it. */
  openStateObjects(owner: SubscriptionOwner, requestedId: string | undefined, filter: StateObjectPatterns): Promise<OpenedSubscription> {
    return this.batcher.run(() => {
      const id = this.choose(owner, 'state_objects', requestedId);
      return { id, added: this.stateObjects.addFilterNow(id, filter) };
    });
  }

  /** Opens (or reuses) a message subscription, joining `group` when given. */
  openMessages(owner: SubscriptionOwner, requestedId: string | undefined, group?: string): Promise<OpenedSubscription> {
    return this.batcher.run(() => {
      const id = this.choose(owner, 'messages', requestedId);
      if (group !== undefined) this.messages.joinGroupNow(id, group);
      return { id, added: false };
    });
  }

  /**
   * The owner's subscription of that kind (touched: active now) with what a poll of it listens for;
   * undefined when it does not exist or is someone else's.
   */
  findOwned(owner: SubscriptionOwner, id: string, kind: SubscriptionKind): Promise<Interest | undefined> {
    return this.batcher.run((): Interest | undefined => {
      const row = this.select.get(id) as SubscriptionRow | undefined;
      if (!row || !this.owns(row, owner, kind)) return undefined;
      this.touch.run(Date.now(), id);
      if (kind === 'state_objects') return { kind, filters: this.stateObjects.filtersNow(id) };
      const addresses = this.messages.addressesNow(id);
      return addresses ? { kind, addresses } : undefined;
    });
  }

  /** Marks the subscription active now (its idle time starts again). */
  touched(id: string): Promise<void> {
    return this.batcher.run(() => {
      this.touch.run(Date.now(), id);
    });
  }

  private owns(row: SubscriptionRow, owner: SubscriptionOwner, kind: SubscriptionKind): boolean {
    return row.kind === kind && row.owner_connection_id === owner.connectionId && row.credential_name === owner.credentialName;
  }

  /**
   * The id to use: the owner's own subscription when `requestedId` is one; the same id re-created empty
   * when it is unknown (it expired); a new id otherwise.
   */
  private choose(owner: SubscriptionOwner, kind: SubscriptionKind, requestedId: string | undefined): string {
    const now = Date.now();
    if (requestedId) {
      const row = this.select.get(requestedId) as SubscriptionRow | undefined;
      if (row && this.owns(row, owner, kind)) {
        this.touch.run(now, row.id);
        return row.id;
      }
      if (!row) {
        this.insert(requestedId, kind, owner, now);
        return requestedId;
      }
    }
    const id = randomUUID();
    this.insert(id, kind, owner, now);
    return id;
  }

  private insert(id: string, kind: SubscriptionKind, owner: SubscriptionOwner, now: number): void {
    const owned = this.countOwned.get(owner.credentialName) as number;
    if (owned >= this.maxPerCredential) {
      throw new HubError(429, 'TooManySubscriptions', `The credential '${owner.credentialName}' has ${owned} subscriptions (the most allowed).`,
        'Reuse a subscription (pass its subscriptionId), or let unused ones expire.');
    }
    const cursor = kind === 'messages' ? this.messages.endOfLogNow() : 0;
    this.insertRow.run(id, kind, owner.connectionId, owner.credentialName, now, now, cursor);
  }
}
