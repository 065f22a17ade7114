/**
 * Deliveries in flight: at least once across crashes, exactly once in normal operation. A poll's take
 * moves its subscription's cursors in its transaction and leaves what it delivered pending there, under
 * the poll's token (SubscriptionStore.settle, the store's takes). The answer's fate settles it: written
 * whole (the response's 'finish'), it is consumed; closed before, or answered with an error, its cursors
 * go back at once and the next poll reads it again. A take that finds a pending delivery of another poll
 * judges it with the poll's claim, plain data the store applies (ports/deliveryClaim.ts): this
 * process's answer still being written is waited for; one of this process whose answer was written is
 * read on past (and ended in that take's transaction), one whose cursors failed to go back is read
 * again; one of another process (PostgreSQL) is waited for up to 2 s after it was taken (a live process
 * settles it in milliseconds), then read again; one of an earlier life of this process (`exclusive`:
 * nobody else uses the database) is read again at once. The take returns its verdict; the poll then
 * records it here (PollDelivery.afterTake).
 *
 * On PostgreSQL a written answer is consumed by a write of its own: other processes judge its pending
 * delivery without this process's memory. On SQLite (`exclusive`) it is not: nobody but this process
 * judges it, and this process reads on past it, so the next poll of the subscription ends it: its
 * first read, in the touch it writes anyway (the poll's claim, SubscriptionStore.findOwned), or else its take,
 * in the take's own transaction (no settling transaction per answer or per fan-out round); a graceful
 * shutdown ends those still pending (close). Nothing is kept in memory for it: the token on the
 * subscription is the record. A crash gives a duplicate, never a loss: before a written answer is
 * settled (PostgreSQL), or before the next poll of its subscription (SQLite), its delivery is read
 * again by the next life.
 */
import { randomUUID } from 'node:crypto';
import { ClientGone } from '../../errors.js';
import type { ClientSignal } from './clientSignal.js';
import type { DeliveryClaim, JudgedPending, PendingDelivery } from '../ports/deliveryClaim.js';
import type { DeliverySettling, SubscriptionStore } from '../ports/subscriptions.js';

/** An answer under way (written once its response finished, until settled); `waiters` are told when it is settled. */
interface Flight {
  written: boolean;
  waiters: (() => void)[] | undefined;
}

/** How long a pending delivery of another process may stay unsettled (a live one settles in milliseconds). */
const GRACE_MS = 2_000;

/** Retries of a take blocked by another process's pending delivery: from 2 ms, doubling, up to this. */
const MAX_STEP_MS = 10;

export class Deliveries {
  /** This life's prefix of every token: a token of this prefix not in `flights` has ended. */
  readonly #life = `${randomUUID()}:`;
  #next = 0;
  readonly #flights = new Map<string, Flight>();
  /**
   * Tokens of this life whose answer was not written and whose cursors failed to go back (a failed
   * write: rare), until a take reads them again. Any other ended token of this life was written.
   */
  readonly #unsent = new Set<string>();
  /** DeliveryClaim.lostAfterMs. */
  readonly #lostAfterMs: number;

  /** The database is this process's alone (SQLite): a pending delivery not of this life is read again at once. */
  private readonly exclusive: boolean;

  constructor(
    private readonly store: SubscriptionStore,
    /** How the store's engine ends a written answer's pending delivery (ports/subscriptions.ts). */
    private readonly settling: DeliverySettling,
    /** A settling write failed (the pending delivery stays: read again later, or read on once judged). */
    private readonly settleFailed: (error: unknown) => void,
  ) {
    this.exclusive = settling.kind === 'byNextPoll';
    this.#lostAfterMs = this.exclusive ? 0 : GRACE_MS;
  }

  /** The claim of one poll (one token for all its takes), settled by how its answer ends. */
  forPoll(abort: ClientSignal): PollDelivery {
    const claim: DeliveryClaim = {
      token: `${this.#life}${++this.#next}`,
      life: this.#life,
      answering: this.#flights,
      unsent: this.#unsent,
      lostAfterMs: this.#lostAfterMs,
    };
    return new PollDelivery(this, claim, abort);
  }

  /** After a take judged `wait`: until that delivery may be judged again (or the client leaves). */
  async waitOut(pending: PendingDelivery, abort: ClientSignal, attempt: number): Promise<void> {
    const flight = this.#flights.get(pending.token);
    const ms = flight ? undefined : Math.min(2 * 2 ** attempt, MAX_STEP_MS);
    await new Promise<void>((resolve) => {
      const done = {
        handleEvent: () => {
          if (timer) clearTimeout(timer);
          abort.removeEventListener('abort', done);
          resolve();
        },
      };
      const timer = ms === undefined ? undefined : setTimeout(() => done.handleEvent(), ms);
      if (flight) (flight.waiters ??= []).push(() => done.handleEvent());
      abort.addEventListener('abort', done);
      if (abort.aborted) done.handleEvent();
    });
    if (abort.aborted) throw new ClientGone();
  }

  /**
   * Before a take of a poll with nothing under way yet: what it may deliver is this process's answer
   * under way from its COMMIT on (a take committed in the same batch may see it first).
   */
  mayFly(token: string): void {
    this.#flights.set(token, { written: false, waiters: undefined });
  }

  /** The take delivered nothing: no answer of that poll is under way. */
  grounded(token: string): void {
    this.#flights.delete(token);
  }

  /**
   * The answer ended: written or not, settle the pending delivery under its token, then forget it.
   * Written on SQLite, it is settled by the next poll of its subscription, or by close (header).
   */
  settle(subscription: string, token: string, written: boolean): void {
    const flight = this.#flights.get(token);
    if (flight) flight.written = written;
    if (written && this.exclusive) {
      this.#land(token);
      return;
    }
    this.store.settle(subscription, token, written).then(
      () => this.#land(token),
      (error: unknown) => {
        this.settleFailed(error);
        // Written: a later take of this process reads on past it (and ends it).
        if (!written) this.#unsent.add(token);
        this.#land(token);
      },
    );
  }

  /** A take judged this pending delivery `delivered` or `redeliver` and committed: it has ended. */
  judged(token: string): void {
    this.#unsent.delete(token);
    if (this.#flights.get(token)?.written) this.#land(token);
  }

  /**
   * Graceful shutdown, once no poll is answered any more: on SQLite the pending deliveries of this
   * life's written answers end now, so the next start reads none of them again (failing, it reads
   * them again: a duplicate each).
   */
  async close(): Promise<void> {
    if (this.settling.kind !== 'byNextPoll') return;
    await this.settling.consumeWritten(this.#life, [...this.#flights.keys(), ...this.#unsent]).catch(this.settleFailed);
  }

  #land(token: string): void {
    const flight = this.#flights.get(token);
    this.#flights.delete(token);
    if (flight?.waiters) for (const wake of flight.waiters) wake();
  }
}

/**
 * One poll's claim on what its takes deliver (as data: `claim`), and the settling of it when its answer
 * ends. Around each take of the poll (hub/polls/subscriptions.ts, SubscriptionPoll.take): beforeTake,
 * the store's take under `claim`, then afterTake with what it delivered and judged (or takeFailed).
 */
export class PollDelivery {
  #subscription: string | undefined = undefined;
  #failed = false;

  constructor(
    private readonly deliveries: Deliveries,
    readonly claim: DeliveryClaim,
    private readonly abort: ClientSignal,
  ) {}

  /** Whether an earlier take of this poll delivered (its answer settles what this one delivers too). */
  get #flying(): boolean {
    return this.#subscription !== undefined;
  }

  /** Before a take: what it may deliver is this process's answer under way from its COMMIT on. */
  beforeTake(): void {
    if (!this.#flying) this.deliveries.mayFly(this.claim.token);
  }

  /**
   * After a take committed: the pending delivery it read on past or read again has ended; what it
   * delivered is settled by how the poll's answer ends. Returns the pending delivery it judged `wait`,
   * to be waited out (waitOut) before the poll takes again.
   */
  afterTake(subscription: string, delivered: boolean, judged: JudgedPending | undefined): PendingDelivery | undefined {
    // Its own (an earlier take of this poll, left out as not visible) is not another poll's to end.
    if (judged && judged.verdict !== 'wait' && judged.token !== this.claim.token) this.deliveries.judged(judged.token);
    if (!this.#flying) {
      if (delivered) this.#fly(subscription);
      else this.deliveries.grounded(this.claim.token);
    }
    return judged?.verdict === 'wait' ? judged : undefined;
  }

  /** The take failed: committed or not (a lost COMMIT), whatever it delivered will not be answered. */
  takeFailed(subscription: string, error: unknown): void {
    if (!(error instanceof ClientGone)) this.#fail(subscription);
    else if (!this.#flying) this.deliveries.grounded(this.claim.token);
  }

  /** Until `pending` (judged `wait`) may be judged again; rejects with ClientGone if the client leaves. */
  waitOut(pending: PendingDelivery, attempt: number): Promise<void> {
    return this.deliveries.waitOut(pending, this.abort, attempt);
  }

  #fly(subscription: string): void {
    this.#subscription = subscription;
    const settle = (written: boolean) => {
      if (!this.#failed) this.deliveries.settle(subscription, this.claim.token, written);
    };
    // Without a response to watch (not HTTP), what a take delivered is consumed at once.
    if (this.abort.whenAnswered) this.abort.whenAnswered(settle);
    else settle(true);
  }

  #fail(subscription: string): void {
    if (this.#failed) return;
    this.#failed = true;
    this.deliveries.settle(this.#subscription ?? subscription, this.claim.token, false);
  }
}
