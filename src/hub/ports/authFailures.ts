/**
 * Failed authentications counted per client address across every hub process sharing the store
 * (PostgreSQL), so that guesses spread over processes behind a load balancer meet the same delays and
 * the same limit as guesses sent to one. Only failures reach it: a successful authentication never
 * does. SQLite has none (one process: the count stays in its memory, hub/access/authFailureThrottle.ts).
 */
export interface AuthFailureStore {
  /**
   * Records one failure of `address` and answers how many it has had in a row, this one included, each
   * within `windowMs` of the one before (by the store's clock, the same for every process).
   */
  record(address: string, windowMs: number): Promise<number>;
  /** Tells the other processes that `address` has reached the limit (they block it too). */
  announceBlocked(address: string): Promise<void>;
}
