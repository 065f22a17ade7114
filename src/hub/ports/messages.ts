/** The message log's port: one ordered log with bounded retention; each subscription reads it through its cursor. */
import type { ClientSignal } from '../polls/clientSignal.js';
import type { DeliveryClaim, JudgedPending } from './deliveryClaim.js';

/**
 * A message as the log keeps it: args and data as JSON text. An engine names its columns so in SQL
 * (`AS`), so the rows it reads reach the wire records with no copy per row.
 */
export interface Message {
  id: number;
  senderConnectionId: string;
  senderType: number;
  senderFriendlyName: string;
  /** The scope's number (hub/scope.ts). */
  scope: number;
  /** JSON text: the scope's arguments. */
  args: string;
  sagaId: string | null;
  key: string;
  /** JSON text. */
  data: string;
  sentMs: number;
}

export type NewMessage = Omit<Message, 'id'>;

/** The key of a saga reply (wire.md). */
export const SAGA_RESPONSE_KEY = '__Response';

export interface TakenMessages {
  messages: Message[];
  /** Log entries that left the retention before this subscription read them (0 normally). */
  missed: number;
  /** What a claimed take decided about a pending delivery it found. */
  judged?: JudgedPending;
}

/** Each operation is one transaction whose promise settles after its COMMIT. */
export interface MessageStore {
  /** Appends; with `sagaReplyBy`, only as the answer to an unanswered saga request that caller received (else 403). */
  send(message: NewMessage, options?: { sagaReplyBy?: string; refusal?: string }): Promise<number>;
  /**
   * Reads what is addressed to the subscription above its cursor and moves it; rejects with ClientGone
   * (nothing consumed) if `abort` fired. With a claim, what it delivers stays pending under the claim's
   * token until settled (SubscriptionStore.settle), and a pending delivery it finds is judged by
   * `pendingVerdict` over the claim (nothing taken on `wait`) and returned as `judged`; without one,
   * what it delivers is consumed at its COMMIT.
   */
  take(subscription: string, limit: number, abort: ClientSignal, claim?: DeliveryClaim): Promise<TakenMessages>;
  /** Removes what every cursor has passed and what is past the age limit; returns how many went. */
  sweep(now: number): Promise<number>;
}
