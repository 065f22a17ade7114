/**
 * A SignalR connection: two subscriptions in the store (its messages, its StateObject filters: feed.ts) and, in
 * this process's memory, what is only the transport's business: the cursor `C` it hands out, the frames
 * a hub call answered with that are not in the store (UpdateStateObject after RequestStateObjects), the
 * last answer a long-polling client has not confirmed yet, the recent answers a WebSocket or SSE client
 * may ask again on /reconnect. The connection token names the subscriptions, so a process that never
 * saw the connection (a restart, another process behind the load balancer) serves it from the store.
 *
 * What the store delivers to a connection is consumed as a REST poll's is: a long-poll's answer once
 * written whole, a pushed frame once handed to an open socket. The process keeps the last long-poll
 * answer until the client's next poll carries its `C` as messageId, and gives it again (the same
 * frames, the same `C`) to a poll carrying the one before; it keeps recent pushed answers for /reconnect.
 */
import { randomUUID } from 'node:crypto';
import { hubError } from '../../errors.js';
import type { Caller } from '../../hub/access/caller.js';
import type { ClientSignal } from '../../hub/polls/clientSignal.js';
import type { HubServices } from '../context.js';
import type { ConnectionIds } from './connectionToken.js';
import { encodeToken } from './connectionToken.js';
import { StoreFeed } from './feed.js';
import type { ClientInvocation, Frame, HubName, TransportName } from './protocol.js';

/** Frames a take found, and how to settle what the store delivered for them. */
interface Batch {
  /** The outbox's frames first (`fromOutbox` of them), then the store's. */
  frames: Frame[];
  fromOutbox: number;
  settle: (sent: boolean) => void;
}

/** Frames handed out under a cursor, kept until the client shows it has them. */
interface Answer {
  cursor: number;
  /** The cursor the poll it answered carried. */
  before: string | undefined;
  frames: Frame[];
}

/** Recent pushed answers kept for /reconnect (ASP.NET keeps 1,000 messages per signal). */
const REPLAY_ANSWERS = 100;

export class HubConnection {
  readonly since = Date.now();
  transport: TransportName | undefined;
  /** Its subscriptions in the store, and what of their deliveries is for it. */
  readonly feed: StoreFeed;
  /** The last cursor handed out: `<life>-<n>`, so a cursor of an earlier life is never taken for one of this. */
  private cursor = 0;
  private readonly life = randomUUID().slice(0, 8);
  private readonly outbox: Frame[] = [];
  /** Long polling: the last answer, until the client's next request says whether it arrived. */
  private held: Answer | undefined;
  /** Pushed transports: the recent answers, for /reconnect. */
  private readonly pushed: { cursor: number; frames: Frame[] }[] = [];
  /** ControlHub: the control groups joined (AddToControlGroup). */
  readonly controlGroups = new Set<string>();
  /** What stops with the connection (a log follower), by name. */
  private readonly onEnds = new Map<string, () => void>();
  /** Started once per connection (OnConnected), not again on a reconnection. */
  started = false;
  ended = false;
  /** Ends the transport serving the connection now (a WebSocket, an SSE stream), if any. */
  detach: (() => void) | undefined;
  /**
   * When this process's last take for the connection ended (epoch ms): its subscriptions, used by
   * nobody since, end with it here (endpoints.ts); undefined, nothing was taken here.
   */
  lastTakeEnded: number | undefined;
  private expiry: NodeJS.Timeout | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly ids: ConnectionIds,
    public caller: Caller,
    readonly hubs: ReadonlySet<HubName>,
    readonly services: HubServices,
    /** Opened here at negotiate (filters known), or served from a token (unknown). */
    fresh: boolean,
  ) {
    const hub = hubs.has('ConstellationHub') ? 'ConstellationHub' : 'ConsumerHub';
    this.feed = new StoreFeed(ids, services, hub, () => this.caller, fresh);
  }

  get token(): string {
    return encodeToken(this.ids);
  }

  get currentCursor(): string {
    return this.cursorText(this.cursor);
  }

  private cursorText(n: number): string {
    return `${this.life}-${n}`;
  }

  /** Frames for the client that are not in the store: sent with the next answer. */
  enqueue(frames: Frame[]): void {
    if (frames.length === 0) return;
    this.outbox.push(...frames);
    this.feed.interrupt?.();
  }

  invocation(hub: HubName, method: string, args: unknown[]): ClientInvocation {
    return { H: hub, M: method, A: args };
  }

  /**
   * Long polling: the answer to a poll carrying `messageId`. The held answer is consumed if the client
   * has it, or given again if not; otherwise waits up to `timeoutMs` for frames.
   */
  poll(messageId: string | undefined, timeoutMs: number, gone: ClientSignal): Promise<{ C: string; M: Frame[] }> {
    return this.oneAtATime(() => this.pollNow(messageId, timeoutMs, gone));
  }

  private async pollNow(
    messageId: string | undefined,
    timeoutMs: number,
    gone: ClientSignal,
  ): Promise<{ C: string; M: Frame[] }> {
    const held = this.held;
    if (held) {
      // The client asks again with the cursor it had before it (the answer was lost after it was
      // written): the same frames, the same cursor. Any other cursor (its own, or one another process
      // gave since) means it is past it.
      if (messageId !== undefined && messageId === held.before)
        return { C: this.cursorText(held.cursor), M: held.frames };
      this.held = undefined;
    }
    const batch = await this.take(timeoutMs, gone);
    if (!batch || batch.frames.length === 0) {
      batch?.settle(true);
      return { C: this.currentCursor, M: [] };
    }
    this.cursor++;
    const answer: Answer = { cursor: this.cursor, before: messageId, frames: batch.frames };
    this.held = answer;
    // As a REST poll's: consumed once written whole (any process then reads on past it); not written,
    // the store gives its part again and the outbox's part goes back, and nothing is held.
    const settled = (sent: boolean) => {
      batch.settle(sent);
      if (sent || this.held !== answer) return;
      this.held = undefined;
      this.outbox.unshift(...batch.frames.slice(0, batch.fromOutbox));
    };
    if (gone.whenAnswered) gone.whenAnswered(settled);
    else settled(true);
    return { C: this.currentCursor, M: batch.frames };
  }

  /**
   * Pushed transports: the next answer (undefined when nothing came within `timeoutMs` or `gone`
   * fired). `write` hands it to the socket and says whether it could (the socket was open); what the store delivered for it is
   * consumed then.
   */
  push(timeoutMs: number, gone: ClientSignal, write: (text: string) => boolean): Promise<boolean> {
    return this.oneAtATime(() => this.pushNow(timeoutMs, gone, write));
  }

  private async pushNow(timeoutMs: number, gone: ClientSignal, write: (text: string) => boolean): Promise<boolean> {
    const batch = await this.next(timeoutMs, gone);
    if (!batch) return false;
    if (batch.frames.length === 0) {
      batch.settle(true);
      return false;
    }
    this.cursor++;
    const answer = { C: this.currentCursor, M: batch.frames };
    const entry = { cursor: this.cursor, frames: batch.frames };
    this.pushed.push(entry);
    if (this.pushed.length > REPLAY_ANSWERS) this.pushed.shift();
    // Consumed once handed to an open socket (a reader too slow must not hold the next take back):
    // what a socket lost after that is given again by /reconnect from `pushed`.
    const sent = write(JSON.stringify(answer));
    batch.settle(sent);
    if (!sent) {
      // Not written: the store gives its part again; the outbox's part goes back to the outbox.
      this.pushed.splice(this.pushed.indexOf(entry), 1);
      this.outbox.unshift(...batch.frames.slice(0, batch.fromOutbox));
    }
    return true;
  }

  /** Pushed transports on /reconnect: what came after the client's messageId, as one answer. */
  replayAfter(messageId: string | undefined): { C: string; M: Frame[] } | undefined {
    const [life, n] = (messageId ?? '').split('-');
    const after = Number(n);
    if (life !== this.life || !Number.isInteger(after)) return undefined;
    const frames = this.pushed.filter((p) => p.cursor > after).flatMap((p) => p.frames);
    return frames.length > 0 ? { C: this.currentCursor, M: frames } : undefined;
  }

  /**
   * Takes run one after another: a newer request stops the take under way and starts once it has
   * ended, so what one take delivered is held (or pushed) before the next reads.
   */
  private oneAtATime<T>(run: () => Promise<T>): Promise<T> {
    this.feed.interrupt?.();
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Stops waiting (a newer request of the connection takes over, or it ends). */
  stopTaking(): void {
    this.feed.interrupt?.();
  }

  /** One take: the outbox, then what the store holds for the subscriptions (not waiting when the outbox has frames). */
  private async take(timeoutMs: number, gone: ClientSignal): Promise<Batch | undefined> {
    this.feed.interrupt?.();
    // A connection that was pushed to before (its transport changed): its polls waiting on end first.
    await this.feed.stopWaiting();
    if (gone.aborted || this.ended) return undefined;
    const taken = await this.feed.take(this.outbox.length > 0 ? 0 : timeoutMs, gone);
    this.lastTakeEnded = Date.now();
    const frames = this.outbox.splice(0);
    const fromOutbox = frames.length;
    frames.push(...taken.frames);
    return { frames, fromOutbox, settle: taken.settle };
  }

  /** Pushed transports: the outbox, or else the next answer of the store's (the feed's polls wait on between). */
  private async next(timeoutMs: number, gone: ClientSignal): Promise<Batch | undefined> {
    if (gone.aborted || this.ended) return undefined;
    const taken = this.outbox.length > 0 ? { frames: [], settle: () => {} } : await this.feed.next(timeoutMs, gone);
    this.lastTakeEnded = Date.now();
    if (!taken || this.ended) {
      taken?.settle(false);
      return undefined;
    }
    const frames = this.outbox.splice(0);
    const fromOutbox = frames.length;
    frames.push(...taken.frames);
    return { frames, fromOutbox, settle: taken.settle };
  }

  /** A pushed transport ended with no other to take over: the feed's polls stop (their subscriptions touched). */
  async stopPushing(): Promise<void> {
    await this.feed.stopWaiting();
    this.lastTakeEnded = Date.now();
  }

  /** The client is gone for now: the state lives `ms` longer unless it comes back. */
  expireAfter(ms: number, expired: () => void): void {
    this.keep();
    this.expiry = setTimeout(expired, ms);
    this.expiry.unref();
  }

  /** The client is back: its state no longer expires. */
  keep(): void {
    if (this.expiry) clearTimeout(this.expiry);
    this.expiry = undefined;
  }

  /** Runs `stop` when the connection ends (or when stopOnEnd(name) is called). */
  onEnd(stop: () => void, name: string): void {
    this.onEnds.get(name)?.();
    this.onEnds.set(name, stop);
  }

  stopOnEnd(name: string): void {
    this.onEnds.get(name)?.();
    this.onEnds.delete(name);
  }

  /** The connection ends (abort, expiry, shutdown): nothing waits any more. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const stop of this.onEnds.values()) stop();
    this.onEnds.clear();
    this.keep();
    this.feed.interrupt?.();
    void this.feed.stopWaiting();
    // A held answer was settled by its response already.
    this.held = undefined;
    this.detach?.();
  }
}

/** A caller may only use its own connection: the same credential and names as at negotiate. */
export function checkSameCaller(connection: HubConnection, caller: Caller): void {
  if (
    connection.caller.friendlyName !== caller.friendlyName ||
    connection.caller.credential.name !== caller.credential.name
  )
    throw hubError('AccessDenied');
  connection.caller = caller;
}
