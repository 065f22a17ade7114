/**
 * Slows repeated authentication failures from one address: each failure within a minute of the
 * previous one adds `stepMs` to the base delay, up to `maxMs`. Other addresses are not affected.
 */
const WINDOW_MS = 60_000;
const MAX_TRACKED = 10_000;

export class AuthFailureThrottle {
  private readonly failures = new Map<string, { count: number; lastMs: number }>();

  constructor(
    private readonly baseMs: number,
    private readonly stepMs: number,
    private readonly maxMs: number,
  ) {}

  /** Records a failure from `address` and returns how long to wait before answering it. */
  failed(address: string, now = Date.now()): number {
    const previous = this.failures.get(address);
    const count = previous && now - previous.lastMs < WINDOW_MS ? previous.count + 1 : 1;
    if (!previous && this.failures.size >= MAX_TRACKED) this.prune(now);
    this.failures.set(address, { count, lastMs: now });
    return Math.min(this.maxMs, this.baseMs + this.stepMs * (count - 1));
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
