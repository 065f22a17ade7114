/**
 * Whether this hub can serve now (`GET /ready`): it is serving (between its start and its stop) and its
 * store answers one round trip within `timeoutMs`. A ready answer is kept `cacheMs` (a not-ready one
 * `retryMs`, so a database coming back is seen soon), and callers arriving while a probe is out share
 * it, so a load balancer asking many times a second costs the database one `select 1` a second. A database that stops answering, and one that answers again, are logged once
 * each; nothing needs restarting when it comes back.
 */

export interface ReadinessAnswer {
  ready: boolean;
  /** Why not, when not ready: `starting`, `stopping` or `database unreachable`. */
  reason?: string;
}

export interface ReadinessLog {
  warn(object: object, message: string): void;
  info(object: object, message: string): void;
}

export class Readiness {
  #serving = false;
  #stopped = false;
  #last: { at: number; answer: ReadinessAnswer } | undefined;
  #probing: Promise<ReadinessAnswer> | undefined;
  #reachable = true;

  constructor(
    private readonly probe: (timeoutMs: number) => Promise<void>,
    private readonly log: ReadinessLog,
    private readonly options = { cacheMs: 1_000, retryMs: 200, timeoutMs: 1_000 },
  ) {}

  /** Serving: false before the start and from the stop on (app.ts closes connections then). */
  get ready(): boolean {
    return this.#serving;
  }

  serve(): void {
    if (!this.#stopped) this.#serving = true;
  }

  stop(): void {
    this.#stopped = true;
    this.#serving = false;
  }

  check(): Promise<ReadinessAnswer> {
    if (!this.#serving) return Promise.resolve({ ready: false, reason: this.#stopped ? 'stopping' : 'starting' });
    const last = this.#last;
    if (last && Date.now() - last.at < (last.answer.ready ? this.options.cacheMs : this.options.retryMs))
      return Promise.resolve(last.answer);
    this.#probing ??= this.#probeOnce().finally(() => (this.#probing = undefined));
    return this.#probing;
  }

  async #probeOnce(): Promise<ReadinessAnswer> {
    let answer: ReadinessAnswer;
    try {
      await this.probe(this.options.timeoutMs);
      answer = { ready: true };
      if (!this.#reachable) this.log.info({}, 'the database answers again: ready');
      this.#reachable = true;
    } catch (error) {
      answer = { ready: false, reason: 'database unreachable' };
      if (this.#reachable)
        this.log.warn({ err: (error as Error).message }, 'the database does not answer: not ready (/ready 503)');
      this.#reachable = false;
    }
    this.#last = { at: Date.now(), answer };
    return answer;
  }
}
