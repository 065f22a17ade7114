/**
 * The console's live data, through the hub's own long-poll interface (as any consumer would):
 * StateObjects (SubscribeToStateObjects + GetStateObjects), messages for the console's own
 * subscription (SubscribeToMessage, SubscribeToMessageGroup + GetMessages), and package logs
 * (management `logs?after=…&timeout=…`). Started at sign-in, stopped at sign-out. Each loop survives a
 * hub restart: it retries with back-off (capped at 5 s) and re-subscribes when its subscription is gone.
 */
import { backoff, consumer, HubFailure, management, Unreachable, whenOnline } from './api';
import { Store } from './store';
import type { LogRecord, Message, StateObject, StateObjectChange } from './types';

const POLL_TIMEOUT_MS = 30_000;
const MESSAGES_KEPT = 1000;
const LOGS_KEPT = 5000;
const POINTS_KEPT = 120;

export const keyOf = (o: { SentinelName: string; PackageName: string; Name: string }) =>
  `${o.SentinelName}/${o.PackageName}/${o.Name}`;

/** Every StateObject the console's subscription reported, by `Sentinel/Package/Name`, with when the page saw it. */
export const stateObjects = new Store<Map<string, StateObject & { seenAt: number; deleted?: boolean }>>(new Map());
/** Numeric values seen while the page is open, per object: the explorer's chart. */
export const history = new Map<string, { at: number; value: number }[]>();
export const received = new Store<(Message & { receivedAt: number })[]>([]);
export const joinedGroups = new Store<string[]>([]);
export const logs = new Store<LogRecord[]>([]);

type SagaWaiter = (message: Message) => void;
const sagaWaiters = new Map<string, SagaWaiter>();

/** Resolves with the `__Response` of a saga sent by the console. */
export function awaitSagaReply(sagaId: string, signal: AbortSignal): Promise<Message> {
  return new Promise((resolve, reject) => {
    sagaWaiters.set(sagaId, resolve);
    signal.addEventListener(
      'abort',
      () => {
        sagaWaiters.delete(sagaId);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

/** A subscription lost (idle-swept, or an unknown id): the hub answers SubscriptionNotFound and we subscribe again. */
const subscriptionLost = (error: unknown) => error instanceof HubFailure && error.code === 'SubscriptionNotFound';

/** Runs `step` until stopped; on failure waits with back-off (reset after each success). */
async function loop(
  signal: AbortSignal,
  step: () => Promise<void>,
  onFailure: (error: unknown) => void,
): Promise<void> {
  let attempt = 0;
  while (!signal.aborted) {
    try {
      await step();
      attempt = 0;
    } catch (error) {
      if (signal.aborted) return;
      onFailure(error);
      // Unreachable: wait for the prober to see the hub again; any other failure: back off.
      if (error instanceof Unreachable) await whenOnline(signal);
      else await backoff(attempt++, signal);
    }
  }
}

function applyChanges(changes: StateObjectChange[]): void {
  if (changes.length === 0) return;
  const next = new Map(stateObjects.value);
  const now = Date.now();
  for (const change of changes) {
    const object = change.StateObject;
    const key = keyOf(object);
    if (change.IsDeleted) {
      next.delete(key);
      history.delete(key);
      continue;
    }
    next.set(key, { ...object, seenAt: now });
    if (typeof object.Value === 'number' && Number.isFinite(object.Value)) {
      const points = history.get(key) ?? [];
      points.push({ at: Date.parse(object.LastUpdate) || now, value: object.Value });
      if (points.length > POINTS_KEPT) points.splice(0, points.length - POINTS_KEPT);
      history.set(key, points);
    }
  }
  stateObjects.set(next);
}

async function followStateObjects(signal: AbortSignal): Promise<void> {
  let id: string | undefined;
  await loop(
    signal,
    async () => {
      id ??= await consumer<string>('SubscribeToStateObjects', { signal });
      applyChanges(
        await consumer<StateObjectChange[]>('GetStateObjects', {
          query: { subscriptionId: id, timeout: POLL_TIMEOUT_MS },
          signal,
        }),
      );
    },
    (error) => {
      if (subscriptionLost(error)) id = undefined;
    },
  );
}

/** The console's message subscription; groups joined are re-joined whenever it is re-created. */
let messageSubscription: string | undefined;

export async function joinGroup(group: string): Promise<void> {
  messageSubscription = await consumer<string>('SubscribeToMessageGroup', {
    query: { group, subscriptionId: messageSubscription },
  });
  if (!joinedGroups.value.includes(group)) joinedGroups.set([...joinedGroups.value, group]);
}

async function followMessages(signal: AbortSignal): Promise<void> {
  await loop(
    signal,
    async () => {
      if (!messageSubscription) {
        messageSubscription = await consumer<string>('SubscribeToMessage', { signal });
        for (const group of joinedGroups.value)
          await consumer('SubscribeToMessageGroup', { query: { group, subscriptionId: messageSubscription }, signal });
      }
      const messages = await consumer<Message[]>('GetMessages', {
        query: { subscriptionId: messageSubscription, timeout: POLL_TIMEOUT_MS },
        signal,
      });
      if (messages.length === 0) return;
      const now = Date.now();
      for (const message of messages) {
        const sagaId = message.Scope.SagaId;
        if (message.Key === '__Response' && sagaId) sagaWaiters.get(sagaId)?.(message);
      }
      const next = [...messages.map((m) => ({ ...m, receivedAt: now })).reverse(), ...received.value];
      received.set(next.slice(0, MESSAGES_KEPT));
    },
    (error) => {
      if (subscriptionLost(error)) messageSubscription = undefined;
    },
  );
}

async function followLogs(signal: AbortSignal): Promise<void> {
  let after: number | undefined;
  await loop(
    signal,
    async () => {
      const entries =
        after === undefined
          ? await management<LogRecord[]>('logs', { query: { limit: 1000 }, signal })
          : await management<LogRecord[]>('logs', { query: { after, timeout: POLL_TIMEOUT_MS, limit: 1000 }, signal });
      if (after === undefined) after = entries.at(-1)?.Id ?? 0;
      if (entries.length === 0) return;
      after = entries.at(-1)!.Id;
      logs.set([...logs.value, ...entries].slice(-LOGS_KEPT));
    },
    () => undefined,
  );
}

let running: AbortController | undefined;

export function startLive(): void {
  running?.abort();
  running = new AbortController();
  const { signal } = running;
  void followStateObjects(signal);
  void followMessages(signal);
  void followLogs(signal);
}

export function stopLive(): void {
  running?.abort();
  running = undefined;
  messageSubscription = undefined;
  stateObjects.set(new Map());
  history.clear();
  received.set([]);
  joinedGroups.set([]);
  logs.set([]);
}
