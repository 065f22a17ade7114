/**
 * Tells a poll that its client went away: AbortSignal's `aborted` and its 'abort' listener object. An
 * AbortSignal is one; the HTTP layer passes a lighter object (http/context.ts).
 */
export interface ClientSignal {
  readonly aborted: boolean;
  /**
   * As on an AbortSignal: every listener added and not removed is called once when the signal fires,
   * in the order added; adding the same listener again changes nothing; one added after it fired is
   * never called (check `aborted` first). `once` is implied: the signal fires at most once.
   */
  addEventListener(type: 'abort', listener: EventListenerObject, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: EventListenerObject): void;
  /**
   * Calls `listener` once when the response ends (at once if it has): `sent` when a 200 answer was
   * written whole, false when the response closed before or answered an error. An AbortSignal has
   * none: a poll then counts what it delivered as sent (hub/polls/deliveries.ts).
   */
  whenAnswered?(listener: (sent: boolean) => void): void;
}
