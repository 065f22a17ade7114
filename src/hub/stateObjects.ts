/** Publishing, purging, requesting and subscribing to StateObjects; every write wakes after its commit. */
import { maySeeStateObject } from './access/authorization.js';
import type { ClientSignal } from './polls/clientSignal.js';
import type { Caller } from './access/caller.js';
import type { ExpiryTimer } from './polls/expiry.js';
import type { StateObjectStore, TakenStateObjects } from './ports/stateObjects.js';
import type { StateObjectPatterns } from './ports/stateObjectPatterns.js';
import type { SubscriptionStore } from './ports/subscriptions.js';
import type { StateObjectRecord, StateObjectUpdateRecord } from './records.js';
import { deletedStateObjectUpdate, stateObjectRecord } from './records.js';
import type { PollRead, Subscriptions } from './polls/subscriptions.js';
import type { ChangeAnnouncer } from './polls/wakeUps.js';

export interface PushInput {
  name: string;
  value: unknown;
  type?: string;
  lifetime: number;
  metadatas: Record<string, string>;
}

/** The type a push without one gets (wire.md). */
export function inferType(value: unknown): string {
  if (typeof value === 'string') return 'System.String';
  if (typeof value === 'boolean') return 'System.Boolean';
  // An integer beyond 2^53 has already lost digits in JSON.parse: it is honestly a double, not an Int64.
  if (typeof value === 'number') return Number.isSafeInteger(value) ? 'System.Int64' : 'System.Double';
  return 'Object';
}

export class StateObjects {
  constructor(
    private readonly store: StateObjectStore,
    private readonly subscriptionStore: SubscriptionStore,
    private readonly notifier: ChangeAnnouncer,
    private readonly subscriptions: Subscriptions,
    private readonly expiry: ExpiryTimer,
  ) {}

  async push(producer: Caller, input: PushInput): Promise<void> {
    const now = Date.now();
    const type = input.type || inferType(input.value);
    const expiresAt = input.lifetime > 0 ? now + input.lifetime * 1000 : null;
    await this.store.push({
      sentinelName: producer.sentinelName,
      packageName: producer.packageName,
      name: input.name,
      type,
      value: JSON.stringify(input.value),
      metadatas: JSON.stringify(input.metadatas),
      lastUpdateMs: now,
      lifetimeS: input.lifetime,
      expiresAtMs: expiresAt,
    });
    const woke = this.notifier.stateObjectChanged({
      sentinelName: producer.sentinelName,
      packageName: producer.packageName,
      name: input.name,
      type,
    });
    if (expiresAt !== null) this.expiry.schedule(expiresAt);
    // Subscribers first: the polls this push woke read and answer before the publisher has its 204.
    if (woke) await this.notifier.wokenAnswered();
  }

  /** Deletes the producer's own objects matching name and type; subscribers are told once. */
  async purge(producer: Caller, name: string, type: string): Promise<number> {
    const purged = await this.store.purge(producer, { name, type });
    let woke = false;
    for (const object of purged) woke = this.notifier.stateObjectChanged(object) || woke;
    if (woke) await this.notifier.wokenAnswered();
    return purged.length;
  }

  async request(caller: Caller, filter: StateObjectPatterns): Promise<StateObjectRecord[]> {
    const objects = await this.store.current(filter);
    const now = Date.now();
    return objects.filter((o) => maySeeStateObject(caller.credential, o)).map((o) => stateObjectRecord(o, now));
  }

  /** Adds `filter` to the caller's subscription (new when no id); its first poll returns current values. */
  async subscribe(caller: Caller, requestedId: string | undefined, filter: StateObjectPatterns): Promise<string> {
    const owner = await this.subscriptions.owner(caller, requestedId);
    const opened = await this.subscriptionStore.openStateObjects(owner, requestedId, filter);
    await this.subscriptions.refresh(caller, opened, 'state_objects');
    return opened.id;
  }

  /**
   * Long-polls the changes of a subscription: each changed object once, with its latest value, oldest
   * change first. Returns undefined when the client went away (nothing consumed).
   */
  poll(
    caller: Caller,
    subscriptionId: string | undefined,
    timeoutMs: number,
    limit: number,
    abort: ClientSignal,
  ): Promise<StateObjectUpdateRecord[] | undefined> {
    return this.subscriptions.poll(caller, subscriptionId, 'state_objects', timeoutMs, limit, abort, this.read);
  }

  /** What a poll reads (Subscriptions.poll): the store's take, and the records of what the caller may see. */
  private readonly read: PollRead<TakenStateObjects, StateObjectUpdateRecord> = {
    take: (subscription, limit, abort, claim) => this.store.take(subscription, limit, abort, claim),
    delivered: (taken) => taken.objects.length > 0,
    visible: (taken, caller) => {
      const now = Date.now();
      return taken.objects
        .filter((c) => maySeeStateObject(caller.credential, c))
        .map((c): StateObjectUpdateRecord =>
          c.current ? { StateObject: stateObjectRecord(c.current, now) } : deletedStateObjectUpdate(c, now),
        );
    },
  };
}
