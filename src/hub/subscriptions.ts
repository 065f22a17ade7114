/** Opening and checking subscriptions on behalf of a caller; shared by StateObjects and messages. */
import { badRequest, subscriptionLost } from '../errors.js';
import { isGuid } from '../store/messageAddresses.js';
import type { Interest, OpenedSubscription, SubscriptionKind, SubscriptionOwner, SubscriptionRegistry, ClientSignal } from '../store/engine.js';
import type { Caller, CallerDirectory } from './caller.js';
import { longPoll } from './longPoll.js';
import type { PollSteps } from './longPoll.js';
import type { PollGate } from './pollGate.js';
import type { WakeUps } from './wakeUps.js';

export { isGuid };
export type { SubscriptionKind };

export class Subscriptions {
  constructor(
    private readonly store: SubscriptionRegistry,
    private readonly callers: CallerDirectory,
    private readonly notifier: WakeUps,
    private readonly gate: PollGate,
  ) {}

  /** The caller as a subscription owner, recorded on first sight. */
  async owner(caller: Caller, requestedId: string | undefined): Promise<SubscriptionOwner> {
    if (requestedId !== undefined && !isGuid(requestedId)) {
      throw badRequest('InvalidSubscriptionId', `subscriptionId '${requestedId}' is not a GUID.`);
    }
    return { connectionId: await this.callers.connectionId(caller), credentialName: caller.credential.name };
  }

  /** After a subscription changed what it listens for: a waiting poll of it listens for that too. */
  async refresh(caller: Caller, opened: OpenedSubscription, kind: SubscriptionKind): Promise<void> {
    if (!this.notifier.isWaiting(opened.id)) return;
    const interest = await this.store.findOwned(await this.owner(caller, undefined), opened.id, kind);
    if (interest) this.notifier.update(opened.id, interest);
    if (opened.added) this.notifier.wake([opened.id]);
  }

  /** The caller's subscription of that kind with what it listens for, or the "subscription lost" 500 firmware re-subscribes on. */
  async requireOwned(caller: Caller, id: string | undefined, kind: SubscriptionKind): Promise<Interest> {
    if (!id) throw badRequest('MissingParameter', "The parameter 'subscriptionId' is required.");
    const connectionId = isGuid(id) ? await this.callers.knownConnectionId(caller) : undefined;
    const interest = connectionId ? await this.store.findOwned({ connectionId, credentialName: caller.credential.name }, id, kind) : undefined;
    if (!interest) throw subscriptionLost(id);
    return interest;
  }

  /**
   * Long-polls the caller's subscription of `kind`: `take` reads and consumes in one transaction (see
   * longPoll). Undefined when the client went away.
   */
  poll<T>(
    caller: Caller,
    id: string | undefined,
    kind: SubscriptionKind,
    timeoutMs: number,
    abort: ClientSignal,
    take: (subscriptionId: string) => Promise<T[]>,
  ): Promise<T[] | undefined> {
    const credential = caller.credential.name;
    const registered = this.requireOwned(caller, id, kind).then((interest) => {
      this.gate.enter(credential);
      // Nothing below holds `interest`: what a waiting poll listens for lives in the notifier only.
      return this.notifier.register(id as string, interest);
    });
    // Not an async function returning longPoll's promise: its own promise would adopt that one (a
    // reaction and two resolving functions per waiting poll).
    return longPoll(this.notifier, id as string, registered, timeoutMs, abort, new SubscriptionPoll(this.store, this.gate, id as string, credential, take));
  }
}

/** A subscription poll's steps around the wait (longPoll), as one small object. */
class SubscriptionPoll<T> implements PollSteps<T> {
  constructor(
    private readonly store: SubscriptionRegistry,
    private readonly gate: PollGate,
    private readonly id: string,
    private readonly credential: string,
    private readonly read: (subscriptionId: string) => Promise<T[]>,
  ) {}

  take(): Promise<T[]> {
    return this.read(this.id);
  }

  /**
   * An empty answer (timeout, superseded, client gone) ends a wait of up to two minutes: active now,
   * recorded before the waiter goes so the idle sweeper cannot take the subscription between.
   */
  settle(result: T[] | undefined): Promise<void> {
    return !result || result.length === 0 ? this.store.touched(this.id) : Promise.resolve();
  }

  end(): void {
    this.gate.leave(this.credential);
  }
}
