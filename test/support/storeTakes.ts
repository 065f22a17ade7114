/**
 * Test support for the store's takes: the caller Consumer/App, a StateObject write and filter
 * patterns, a message to All, a signal that never aborts, and a claim that records what it judges.
 */
import { randomUUID } from 'node:crypto';
import type { NewCaller } from '../../src/hub/ports/callers.js';
import type { NewMessage } from '../../src/hub/ports/messages.js';
import { ScopeType } from '../../src/hub/scope.js';
import type { StateObjectWrite } from '../../src/hub/ports/stateObjects.js';
import type {
  DeliveryClaim,
  JudgedPending,
  PendingDelivery,
  PendingVerdict,
} from '../../src/hub/ports/deliveryClaim.js';

/** The consumer Consumer/App, first seen long ago, under a new ConnectionId. */
export const consumerApp = (): NewCaller => ({
  connectionId: randomUUID(),
  friendlyName: 'Consumer/App',
  kind: 'consumer',
  sentinelName: 'Consumer',
  packageName: 'App',
  firstSeenMs: 1,
});

/** The package S1/P1, first seen long ago, under a new ConnectionId. */
export const packageS1P1 = (): NewCaller => ({
  connectionId: randomUUID(),
  friendlyName: 'S1/P1',
  kind: 'package',
  sentinelName: 'S1',
  packageName: 'P1',
  firstSeenMs: 1,
});

/** A message to All with key K sent by `sender`. */
export const messageFrom =
  (sender: { connectionId: string; friendlyName: string }) =>
  (data: string, extra: Partial<NewMessage> = {}): NewMessage => ({
    senderConnectionId: sender.connectionId,
    senderType: 1,
    senderFriendlyName: sender.friendlyName,
    scope: ScopeType.All,
    args: '[]',
    sagaId: null,
    key: 'K',
    data,
    sentMs: 1_000,
    ...extra,
  });

/** A push of `name` = `value` by S1/P1. */
export const write = (name: string, value: number, extra: Partial<StateObjectWrite> = {}): StateObjectWrite => ({
  sentinelName: 'S1',
  packageName: 'P1',
  name,
  type: 'System.Int32',
  value: String(value),
  metadatas: '{}',
  lastUpdateMs: 1_000,
  lifetimeS: 0,
  expiresAtMs: null,
  ...extra,
});

/** Filter patterns: every sentinel, package and type unless `rest` says otherwise. */
export const patterns = (name = '*', rest: Partial<{ sentinel: string; package: string; type: string }> = {}) => ({
  sentinel: '*',
  package: '*',
  type: '*',
  name,
  ...rest,
});

export const signal = () => new AbortController().signal;

/** A test's claim: data, and the pending deliveries its takes were shown (recorded by `shownTo`). */
export type TestClaim = DeliveryClaim & { shown: PendingDelivery[] };

/** A take's claim (plain data) under which any pending delivery of another token is judged `verdict`. */
export const claim = (token: string, verdict: PendingVerdict = 'wait'): TestClaim => ({
  token,
  // Every token starts with '': read on past it. Otherwise another life's, lost at once or never.
  life: verdict === 'delivered' ? '' : 'another life:',
  answering: new Map(),
  unsent: new Set(),
  lostAfterMs: verdict === 'redeliver' ? 0 : Number.POSITIVE_INFINITY,
  shown: [],
});

/** Records on `by` the pending delivery its take judged (the take's `judged`), and returns the take. */
export const shownTo = <T extends { judged?: JudgedPending }>(by: TestClaim | undefined, taken: T): T => {
  if (by && taken.judged) by.shown.push({ token: taken.judged.token, sinceMs: taken.judged.sinceMs });
  return taken;
};
