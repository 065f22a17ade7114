/**
 * Slows repeated authentication failures from one address: each failure within a minute of the
 * previous one adds `stepMs` to the base delay, up to `maxMs`. Device libraries give up on an answer
 * after 5 s and then read a late 403 as the answer to their next request on the same connection, so
 * the delay stays well under that (3 s by default); an address that keeps failing past `limit` is
 * instead refused at once with 429 (Retry-After, connection closed) until a minute after its last
 * failure. Other addresses are not affected.
 *
 * With a shared store (PostgreSQL: several processes), each failure is counted there, across all
 * processes, and an address that reaches the limit is announced to the others, which block it too
 * (`blockedElsewhere`). Whether an address is blocked is still answered from this process's memory, so
 * a request that authenticates costs no database round trip; a failure costs one.
 */
import type { AuthFailureStore } from '../ports/authFailures.js';

const WINDOW_MS = 60_000;
const MAX_TRACKED = 10_000;

export interface AuthFailureLimits {
  baseMs: number;
  stepMs: number;
  maxMs: number;
  /** Failures within the window after which the address is blocked. */
  limit: number;
}

export class AuthFailureThrottle {
  private readonly failures = new Map<string, { count: number; lastMs: number }>();

  constructor(
    private readonly limits: AuthFailureLimits,
    private readonly shared?: AuthFailureStore,
    private readonly onStoreError: (error: unknown) => void = () => {},
  ) {}

  /** Seconds until `address` may try again, or 0 when it is not blocked. */
  blockedFor(address: string, now = Date.now()): number {
    const entry = this.failures.get(address);
    if (!entry || entry.count < this.limits.limit || now - entry.lastMs >= WINDOW_MS) return 0;
    return Math.max(1, Math.ceil((entry.lastMs + WINDOW_MS - now) / 1000));
  }

  /** Records a failure from `address` and returns how long to wait before answering it. */
  async failed(address: string, now = Date.now()): Promise<number> {
    const previous = this.failures.get(address);
    let count = previous && now - previous.lastMs < WINDOW_MS ? previous.count + 1 : 1;
    if (this.shared) {
      try {
        count = Math.max(count, await this.shared.record(address, WINDOW_MS));
        if (count >= this.limits.limit) await this.shared.announceBlocked(address);
      } catch (error) {
        // The database is out of reach: this process's own count still slows and blocks.
        this.onStoreError(error);
      }
    }
    this.remember(address, count, now);
    const { baseMs, stepMs, maxMs } = this.limits;
    return Math.min(maxMs, baseMs + stepMs * (count - 1));
  }

  /** Another process saw `address` reach the limit: blocked here too, for a minute from now. */
  blockedElsewhere(address: string, now = Date.now()): void {
    const previous = this.failures.get(address);
    this.remember(address, Math.max(this.limits.limit, previous?.count ?? 0), now);
  }

  private remember(address: string, count: number, now: number): void {
    if (!this.failures.has(address) && this.failures.size >= MAX_TRACKED) this.prune(now);
    this.failures.set(address, { count, lastMs: now });
  }

  private prune(now: number): void {
    for (const [address, entry] of this.failures) if (now - entry.lastMs >= WINDOW_MS) this.failures.delete(address);
    // Still full of recent failures: forget the oldest half rather than grow without bound.
    if (this.failures.size >= MAX_TRACKED) {
      const oldest = [...this.failures.entries()].sort((a, b) => a[1].lastMs - b[1].lastMs);
      for (const [address] of oldest.slice(0, MAX_TRACKED / 2)) this.failures.delete(address);
    }
  }
}
