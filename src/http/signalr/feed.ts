/**
 * A SignalR connection's feed from the store: its two subscriptions (its messages, its StateObject
 * filters), waited on as REST long-polls are, and what they deliver turned into its hub's callbacks:
 * `ReceiveMessage` and `UpdateStateObject`, and for a package `UpdateSettings` and `PackageControlAction`
 * (the messages the hub sends packages anyway). What the process knows of the connection narrows that:
 * the filters it unsubscribed, the groups it left, the settings it already sent.
 */
import { SETTINGS_UPDATED_KEY } from '../../hub/configuration/configurationFileActions.js';
import type { Caller } from '../../hub/access/caller.js';
import type { ClientSignal } from '../../hub/polls/clientSignal.js';
import type { MessageRecord, StateObjectUpdateRecord } from '../../hub/records.js';
import { matchesPattern } from '../../wildcard.js';
import type { HubServices } from '../context.js';
import type { ConnectionIds } from './connectionToken.js';
import type { Frame, HubName } from './protocol.js';
import { TakeSignal } from './takeSignal.js';

/** The key of the message a control action (ControlHub's Start, Stop, Restart, Reload) sends a package. */
export const CONTROL_ACTION_KEY = '__PackageControlAction';

/** What a message the hub sends a package stands for on a package's hub connection: a callback, or undefined. */
function packageCallback(key: string): 'UpdateSettings' | 'PackageControlAction' | undefined {
  if (key === SETTINGS_UPDATED_KEY) return 'UpdateSettings';
  if (key === CONTROL_ACTION_KEY) return 'PackageControlAction';
  return undefined;
}

/** Most messages and StateObject changes read from the store in one take. */
const TAKE_LIMIT = 500;

export interface Filter {
  sentinel: string;
  package: string;
  name: string;
  type: string;
}

const matchesFilter = (f: Filter, so: StateObjectUpdateRecord['StateObject']) =>
  matchesPattern(f.sentinel, so.SentinelName) &&
  matchesPattern(f.package, so.PackageName) &&
  matchesPattern(f.name, so.Name) &&
  matchesPattern(f.type, so.Type);

/** Frames a take found, and how to settle what the store delivered for them (consumed once sent). */
export interface Taken {
  frames: Frame[];
  settle: (sent: boolean) => void;
}

type Kind = 'messages' | 'stateObjects';

/** A poll of one subscription that outlives the answer it was started for (pushed transports). */
interface Waiting {
  kind: Kind;
  signal: TakeSignal;
  /** Settles when the poll has: then `outcome` says how. */
  ended: Promise<void>;
  outcome?: { records: unknown[] } | { error: unknown };
}

export class StoreFeed {
  /** Pushed transports: each kind's poll, waiting on while the other's answers go out (next). */
  private readonly waiting = new Map<Kind, Waiting>();
  /** Known only to the process that opened them (undefined: served from a token, unknown). */
  private filters: Filter[] | undefined;
  private readonly leftGroups = new Set<string>();
  /** Whether the StateObject subscription exists (a poll of one that does not is a SubscriptionNotFound). */
  private stateObjectsOpen: boolean;
  /** The settings last sent with UpdateSettings (JSON), once the package asked for them. */
  settingsSent: string | undefined;
  /** Stops the take under way (new frames in the outbox, the connection ending). */
  interrupt: (() => void) | undefined;

  constructor(
    private readonly ids: ConnectionIds,
    private readonly services: HubServices,
    /** The hub the store's deliveries are written under (UpdateStateObject, ReceiveMessage). */
    private readonly hub: HubName,
    /** The connection's caller now (a later request may bring it again). */
    private readonly caller: () => Caller,
    /** Opened here at negotiate (filters known), or served from a token (unknown). */
    fresh: boolean,
  ) {
    this.filters = fresh ? [] : undefined;
    this.stateObjectsOpen = !fresh;
  }

  async subscribeStateObjects(filter: Filter): Promise<void> {
    await this.services.stateObjects.subscribe(this.caller(), this.ids.stateObjects, filter);
    this.filters?.push(filter);
    if (!this.stateObjectsOpen) {
      this.stateObjectsOpen = true;
      // The take under way does not poll the StateObject subscription yet: start one that does.
      this.interrupt?.();
    }
  }

  /** Updates of objects this filter let in stop, unless another filter lets them in too. */
  unsubscribeStateObjects(filter: Filter): void {
    if (this.filters === undefined) this.filters = [];
    this.filters = this.filters.filter(
      (f) =>
        f.sentinel !== filter.sentinel ||
        f.package !== filter.package ||
        f.name !== filter.name ||
        f.type !== filter.type,
    );
  }

  async joinGroup(group: string): Promise<void> {
    await this.services.messages.joinGroup(this.caller(), group, this.ids.messages);
    this.leftGroups.delete(group);
  }

  leaveGroup(group: string): void {
    this.leftGroups.add(group);
  }

  /** Makes sure the message subscription exists (its first use). */
  async openMessages(): Promise<void> {
    await this.services.messages.subscribe(this.caller(), this.ids.messages);
  }

  /**
   * Pushed transports: the next answer of either subscription, waiting up to `timeoutMs` for it. Each
   * kind's poll waits on across answers: an answer of one leaves the other waiting (a REST long-poll's
   * cost per wake-up, not both polls ended and started again). Empty when interrupted (the outbox has
   * frames, a subscription opened) or a poll timed out; undefined once `gone` fired (the polls stop).
   */
  async next(timeoutMs: number, gone: ClientSignal): Promise<Taken | undefined> {
    this.startWaiting('messages', timeoutMs);
    if (this.stateObjectsOpen) this.startWaiting('stateObjects', timeoutMs);
    if (!this.answered() && !gone.aborted) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          gone.removeEventListener('abort', onGone);
          if (this.interrupt === wake) this.interrupt = undefined;
          resolve();
        };
        const onGone = { handleEvent: wake };
        gone.addEventListener('abort', onGone);
        this.interrupt = wake;
      });
    }
    if (gone.aborted) {
      await this.stopWaiting();
      return undefined;
    }
    const waiting = this.answered();
    if (!waiting?.outcome) return { frames: [], settle: () => {} };
    this.waiting.delete(waiting.kind);
    const settle = (sent: boolean) => waiting.signal.settle(sent);
    if ('error' in waiting.outcome) {
      settle(false);
      const { error } = waiting.outcome;
      if (waiting.kind === 'stateObjects' && (error as { code?: string }).code === 'SubscriptionNotFound') {
        this.stateObjectsOpen = false;
        return { frames: [], settle: () => {} };
      }
      await this.stopWaiting();
      throw error;
    }
    const { records } = waiting.outcome;
    const frames =
      waiting.kind === 'messages'
        ? this.messageFrames(records as MessageRecord[])
        : this.stateObjectFrames(records as StateObjectUpdateRecord[]);
    return { frames, settle };
  }

  /** A poll of next()'s that has ended (found something, timed out or failed), if any. */
  private answered(): Waiting | undefined {
    for (const waiting of this.waiting.values()) if (waiting.outcome) return waiting;
    return undefined;
  }

  private startWaiting(kind: Kind, timeoutMs: number): void {
    if (this.waiting.has(kind)) return;
    const signal = new TakeSignal();
    const caller = this.caller();
    const polled: Promise<unknown[] | undefined> =
      kind === 'messages'
        ? this.services.messages.poll(caller, this.ids.messages, timeoutMs, TAKE_LIMIT, signal)
        : this.services.stateObjects.poll(caller, this.ids.stateObjects, timeoutMs, TAKE_LIMIT, signal);
    const waiting: Waiting = { kind, signal, ended: Promise.resolve() };
    const ended = (outcome: Waiting['outcome']) => {
      waiting.outcome = outcome;
      if (this.waiting.get(kind) === waiting) this.interrupt?.();
    };
    waiting.ended = polled.then(
      (records) => ended({ records: records ?? [] }),
      (error: unknown) => ended({ error }),
    );
    this.waiting.set(kind, waiting);
  }

  /**
   * Ends the polls next() left waiting (what one of them took meanwhile is read again), resolving once
   * they have ended (their subscriptions touched).
   */
  async stopWaiting(): Promise<void> {
    const stopped = [...this.waiting.values()];
    this.waiting.clear();
    for (const waiting of stopped) waiting.signal.abort();
    await Promise.all(stopped.map((w) => w.ended));
    for (const waiting of stopped) waiting.signal.settle(false);
  }

  /**
   * Long polling: one take of what the store holds for the subscriptions, waiting up to `timeoutMs`
   * for it (both polls wait at once; the first with something stops the other). Once next()'s polls
   * have stopped (stopWaiting).
   */
  async take(timeoutMs: number, gone: ClientSignal): Promise<Taken> {
    const signals: TakeSignal[] = [];
    const stop = () => signals.forEach((s) => s.abort());
    const onGone = { handleEvent: stop };
    gone.addEventListener('abort', onGone);
    this.interrupt = stop;
    const { messages, stateObjects } = this.services;
    const caller = this.caller();
    const messageSignal = new TakeSignal();
    signals.push(messageSignal);
    const polls: Promise<unknown>[] = [
      messages.poll(caller, this.ids.messages, timeoutMs, TAKE_LIMIT, messageSignal).then((found) => {
        if (found?.length) stop();
        return found;
      }),
    ];
    if (this.stateObjectsOpen) {
      const stateObjectSignal = new TakeSignal();
      signals.push(stateObjectSignal);
      polls.push(
        stateObjects.poll(caller, this.ids.stateObjects, timeoutMs, TAKE_LIMIT, stateObjectSignal).then((found) => {
          if (found?.length) stop();
          return found;
        }),
      );
    }
    const [messageResult, stateObjectResult] = await Promise.allSettled(polls);
    gone.removeEventListener('abort', onGone);
    if (this.interrupt === stop) this.interrupt = undefined;
    const settle = (sent: boolean) => signals.forEach((s) => s.settle(sent));
    if (messageResult.status === 'rejected') {
      settle(false);
      throw messageResult.reason;
    }
    if (stateObjectResult?.status === 'rejected') {
      if ((stateObjectResult.reason as { code?: string }).code !== 'SubscriptionNotFound') {
        settle(false);
        throw stateObjectResult.reason;
      }
      this.stateObjectsOpen = false;
    }
    const changes =
      stateObjectResult?.status === 'fulfilled'
        ? ((stateObjectResult.value as StateObjectUpdateRecord[] | undefined) ?? [])
        : [];
    const frames = [
      ...this.messageFrames((messageResult.value as MessageRecord[] | undefined) ?? []),
      ...this.stateObjectFrames(changes),
    ];
    return { frames, settle };
  }

  private messageFrames(found: MessageRecord[]): Frame[] {
    const frames: Frame[] = [];
    for (const message of found) {
      if (!this.wants(message)) continue;
      const callback = this.hub === 'ConstellationHub' ? packageCallback(message.Key) : undefined;
      if (callback === 'UpdateSettings') {
        // Sent again only when they differ from what watchSettings already sent.
        const text = JSON.stringify(message.Data);
        if (text === this.settingsSent) continue;
        this.settingsSent = text;
      }
      frames.push({ H: this.hub, M: callback ?? 'ReceiveMessage', A: [callback ? message.Data : message] });
    }
    return frames;
  }

  private stateObjectFrames(changes: StateObjectUpdateRecord[]): Frame[] {
    const frames: Frame[] = [];
    for (const change of changes) {
      if (change.IsDeleted) continue;
      if (this.filters && !this.filters.some((f) => matchesFilter(f, change.StateObject))) continue;
      frames.push({ H: this.hub, M: 'UpdateStateObject', A: [change.StateObject] });
    }
    return frames;
  }

  /** A group message of a group the connection left is not for it. */
  private wants(message: MessageRecord): boolean {
    if (this.leftGroups.size === 0 || message.Scope.Scope !== 1) return true;
    return !message.Scope.Args.every((group) => this.leftGroups.has(group));
  }
}
