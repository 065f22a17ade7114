/**
 * Opening and checking subscriptions on behalf of a caller, and polling them; shared by StateObjects
 * and messages. A poll reads top to bottom here: Subscriptions.poll finds the caller's subscription
 * and registers its waiter; longPoll waits; SubscriptionPoll.take takes under the poll's claim (the
 * store applies it: ports/deliveryClaim.ts), waits out another answer's pending delivery, keeps what
 * the caller may see; longPoll answers; the answer's end settles what was delivered (deliveries.ts).
 */
import { hubError } from '../../errors.js';
import type { ClientSignal } from './clientSignal.js';
import type { Deliveries, PollDelivery } from './deliveries.js';
import { isGuid } from '../messageAddresses.js';
import type { DeliveryClaim, JudgedPending } from '../ports/deliveryClaim.js';
import type {
  OpenedSubscription,
  SubscriptionInterest,
  SubscriptionKind,
  SubscriptionOwner,
  SubscriptionStore,
} from '../ports/subscriptions.js';
import type { Caller, CallerDirectory } from '../access/caller.js';
import { longPoll } from './longPoll.js';
import type { PollSteps } from './longPoll.js';
import type { PollGate } from './pollGate.js';
import type { InterestChange, PollsElsewhere } from '../ports/pollsElsewhere.js';
import type { PollWaiter, WakeUps } from './wakeUps.js';

export type { SubscriptionKind };

/**
 * What a poll of one kind of subscription reads (StateObjects, messages): one object per kind, not
 * closures per poll (thousands wait at once).
 */
export interface PollRead<R extends { judged?: JudgedPending }, T> {
  /** The store's take: reads and consumes in one transaction, the claim applied there (the port's take). */
  take(subscription: string, limit: number, abort: ClientSignal, claim: DeliveryClaim): Promise<R>;
  /** Whether the take delivered anything (the poll's answer then settles it). */
  delivered(taken: R): boolean;
  /** The records of what was taken that the caller may see (what was not is read past and left out). */
  visible(taken: R, caller: Caller, subscription: string): T[];
}

const missingSubscriptionId = () => hubError('MissingParameter', { parameter: 'subscriptionId' });

/** A subscription some poll of which is between reading its filters and registering its waiter. */
interface Registering {
  /** Polls of it registering now (the entry goes with the last). */
  polls: number;
  /** Changes to what it listens for (refresh) since the entry was made. */
  changes: number;
}

export class Subscriptions {
  /**
   * A poll reads what its subscription listens for, then registers its waiter some microtasks later; a
   * filter or group added in between (refresh finds no waiter yet) is counted here, and the poll reads
   * again once registered. Only subscriptions with a poll registering right now have an entry.
   */
  private readonly registering = new Map<string, Registering>();

  constructor(
    private readonly store: SubscriptionStore,
    private readonly callers: CallerDirectory,
    private readonly notifier: WakeUps,
    private readonly gate: PollGate,
    private readonly deliveries: Deliveries,
    /** Several processes on one store: what this process's polls tell the others (none with one). */
    private readonly elsewhere?: PollsElsewhere,
  ) {
    elsewhere?.onChanged((change) => void this.changedElsewhere(change));
  }

  /** The caller as a subscription owner, recorded on first sight. */
  async owner(caller: Caller, requestedId: string | undefined): Promise<SubscriptionOwner> {
    if (requestedId !== undefined && !isGuid(requestedId)) {
      throw hubError('InvalidSubscriptionId', { id: requestedId });
    }
    return { connectionId: await this.callers.connectionId(caller), credentialName: caller.credential.name };
  }

  /**
   * After a subscription changed what it listens for (committed): a waiting poll of it listens for that
   * too, here and, with several processes, on the others.
   */
  async refresh(caller: Caller, opened: OpenedSubscription, kind: SubscriptionKind): Promise<void> {
    const registering = this.registering.get(opened.id);
    if (registering) registering.changes++;
    const owner =
      this.elsewhere || this.notifier.isWaiting(opened.id) ? await this.owner(caller, undefined) : undefined;
    if (owner) this.elsewhere?.changed({ id: opened.id, kind, owner });
    if (!owner || !this.notifier.isWaiting(opened.id)) return;
    const interest = await this.store.findOwned(owner, opened.id, kind);
    if (interest) this.notifier.update(opened.id, interest);
    if (opened.added) this.notifier.wake([opened.id]);
  }

  /**
   * Another process committed a change to what `change.id` listens for: a poll of it waiting (or
   * registering) here listens for that too, and reads at once (what the change let in may have been
   * announced before this notice came).
   */
  private async changedElsewhere(change: InterestChange): Promise<void> {
    const registering = this.registering.get(change.id);
    if (registering) registering.changes++;
    if (!this.notifier.isWaiting(change.id)) return;
    try {
      const interest = await this.store.findOwned(change.owner, change.id, change.kind);
      if (interest) this.notifier.update(change.id, interest);
    } catch {
      // The poll keeps listening for what it did; the wake-up below still makes it read.
    }
    this.notifier.wake([change.id]);
  }

  /**
   * Deletes the caller's subscriptions among `ids` (their client ended them), except any used at or
   * after `usedSince` (another process serves them now: SubscriptionStore.removeOwned). How many went.
   */
  async remove(caller: Caller, ids: string[], usedSince?: number): Promise<number> {
    const connectionId = await this.callers.knownConnectionId(caller);
    if (!connectionId) return 0;
    return this.store.removeOwned({ connectionId, credentialName: caller.credential.name }, ids, usedSince);
  }

  /**
   * The caller's subscription of that kind with what it listens for, or the "subscription lost" 500
   * firmware re-subscribes on. `claim`: a poll's first read (SubscriptionStore.findOwned).
   */
  async requireOwned(
    caller: Caller,
    id: string | undefined,
    kind: SubscriptionKind,
    claim?: DeliveryClaim,
  ): Promise<SubscriptionInterest> {
    if (!id) throw missingSubscriptionId();
    const connectionId = isGuid(id) ? await this.callers.knownConnectionId(caller) : undefined;
    const interest = connectionId
      ? await this.store.findOwned({ connectionId, credentialName: caller.credential.name }, id, kind, claim)
      : undefined;
    if (!interest) throw hubError('SubscriptionNotFound', { id });
    return interest;
  }

  /**
   * Long-polls the caller's subscription of `kind`: `read` takes (reads and consumes in one
   * transaction, see longPoll) under the poll's claim, what it delivers settled by how the answer ends
   * (deliveries.ts). Undefined when the client went away.
   */
  poll<R extends { judged?: JudgedPending }, T>(
    caller: Caller,
    id: string | undefined,
    kind: SubscriptionKind,
    timeoutMs: number,
    limit: number,
    abort: ClientSignal,
    read: PollRead<R, T>,
  ): Promise<T[] | undefined> {
    if (!id) return Promise.reject(missingSubscriptionId());
    const credential = caller.credential.name;
    const delivery = this.deliveries.forPoll(abort);
    let registering = this.registering.get(id);
    if (registering) registering.polls++;
    else this.registering.set(id, (registering = { polls: 1, changes: 0 }));
    const changesBefore = registering.changes;
    // Its first read also ends, on SQLite, the written answer of the subscription's last poll.
    const registered = this.requireOwned(caller, id, kind, delivery.claim).then(
      (interest) => {
        // Counted up to now: register below follows in the same synchronous run, no refresh between.
        const changed = registering.changes !== changesBefore;
        this.doneRegistering(id, registering);
        this.gate.enter(credential);
        // Nothing below holds `interest`: what a waiting poll listens for lives in the notifier only.
        const waiter = this.notifier.register(id, interest);
        // Several processes: a newer poll of it anywhere ends this one (its claim failing leaves it unordered).
        this.elsewhere?.claim(id).then(
          (order) => this.notifier.ordered(id, waiter, order),
          () => {},
        );
        // Changed since `interest` was read (refresh found no waiter): listen for what it is now. The
        // first read comes after, so it also returns the current values of an added filter.
        return changed ? this.reread(caller, id, kind, waiter) : waiter;
      },
      (error: unknown) => {
        this.doneRegistering(id, registering);
        throw error;
      },
    );
    // Not an async function returning longPoll's promise: its own promise would adopt that one (a
    // reaction and two resolving functions per waiting poll).
    return longPoll(
      this.notifier,
      id,
      registered,
      timeoutMs,
      abort,
      new SubscriptionPoll(this.store, this.gate, id, caller, limit, abort, delivery, read),
    );
  }

  private doneRegistering(id: string, registering: Registering): void {
    if (--registering.polls === 0) this.registering.delete(id);
  }

  /** The registered poll's waiter, once it listens for what the subscription listens for now. */
  private async reread(caller: Caller, id: string, kind: SubscriptionKind, waiter: PollWaiter): Promise<PollWaiter> {
    try {
      const interest = await this.store.findOwned(await this.owner(caller, undefined), id, kind);
      if (interest) this.notifier.update(id, interest);
    } catch {
      // The waiter is registered and the gate entered: longPoll must get it to release both. Its first
      // read meets the same trouble and answers it (a 503 for a busy database).
    }
    return waiter;
  }
}

/**
 * A subscription poll's steps around the wait (longPoll), as one small object: take, then settle
 * (longPoll answers between), then end.
 */
class SubscriptionPoll<R extends { judged?: JudgedPending }, T> implements PollSteps<T> {
  constructor(
    private readonly store: SubscriptionStore,
    private readonly gate: PollGate,
    private readonly id: string,
    private readonly caller: Caller,
    private readonly limit: number,
    private readonly abort: ClientSignal,
    private readonly delivery: PollDelivery,
    private readonly read: PollRead<R, T>,
  ) {}

  /**
   * The store's take under the poll's claim; a pending delivery of another answer it judged `wait` is
   * waited out and the take tried again. Of what it took, what the caller may not see is read past (its
   * cursor moves) and left out: it reads on while a whole take was left out, so an answer is not empty
   * while visible changes wait. Rejects with ClientGone if the client leaves (nothing consumed).
   */
  async take(): Promise<T[]> {
    const { delivery, read } = this;
    for (let waits = 0; ;) {
      delivery.beforeTake();
      let taken: R;
      try {
        taken = await read.take(this.id, this.limit, this.abort, delivery.claim);
      } catch (error) {
        delivery.takeFailed(this.id, error);
        throw error;
      }
      const delivered = read.delivered(taken);
      const blocked = delivery.afterTake(this.id, delivered, taken.judged);
      if (blocked) {
        await delivery.waitOut(blocked, waits++);
        continue;
      }
      waits = 0;
      const visible = read.visible(taken, this.caller, this.id);
      if (visible.length > 0 || !delivered) return visible;
    }
  }

  /**
   * An empty answer (timeout, superseded, client gone) ends a wait of up to two minutes: active now,
   * recorded before the waiter goes so the idle sweeper cannot take the subscription between.
   */
  settle(result: T[] | undefined): Promise<void> {
    return !result || result.length === 0 ? this.store.touched(this.id) : Promise.resolve();
  }

  end(): void {
    this.gate.leave(this.caller.credential.name);
  }
}
