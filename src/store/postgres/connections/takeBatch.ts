/**
 * A process's poll takes on PostgreSQL in batches (issue 22: one push wakes a thousand polls, and a
 * take each would queue them through the pool's few connections; SQLite's store/sqlite/database/batch.ts does the same):
 * the takes submitted in one turn of the event loop, or while batches run, form the next batches, each
 * carried out by one `run` (one transaction on one connection). Two batches are in flight at most: a
 * wake-up larger than one batch (a send to All) then has its second batch's round trips go while the
 * first batch's answers are written, instead of after them (issue 22, P4).
 *
 * - A subscription already in a batch in flight waits for a later one with its later takes: one
 *   statement must not write a row twice, and two batches at once must not race for it.
 * - A result undefined means "not for the batch" (a delivery pending, say): that take goes its single way.
 * - A batch failing with a serialization failure or a deadlock (one of its subscriptions taken elsewhere
 *   at once) runs its takes again one by one, so that the conflict fails one take, not the batch; any
 *   other failure fails its takes as a single take's would.
 */
import { sqlState, storeError } from './transaction.js';

const RETRIABLE = new Set(['40P01', '40001']);

interface Job<I, R> {
  item: I;
  resolve(result: R | undefined): void;
  reject(error: unknown): void;
}

export interface TakeBatchOptions<I, R> {
  /** The takes of `items` in one transaction, attempted once; one result per item, in order. */
  run(items: I[]): Promise<(R | undefined)[]>;
  /** The same take of one item, retried as any transaction (after the batch's conflict). */
  runAlone(item: I): Promise<R | undefined>;
  /** The subscription an item takes from. */
  subscriptionOf(item: I): string;
  /** Takes per batch at most; the rest form the next. Default 1,000. */
  maxItems?: number;
  /** Batches in flight at most, each on a connection of its own. Default 2. */
  inFlight?: number;
}

export class TakeBatch<I, R> {
  #queue: Job<I, R>[] = [];
  /** Batches started and not yet settled. */
  #inFlight = 0;
  #gathering = false;
  /** The subscriptions of the batches in flight: a later take of one waits for a later batch. */
  readonly #busy = new Set<string>();
  readonly #options: TakeBatchOptions<I, R>;

  constructor(options: TakeBatchOptions<I, R>) {
    this.#options = options;
  }

  /** The take's result after its transaction committed; undefined: not taken, for the single path. */
  submit(item: I): Promise<R | undefined> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      if (this.#inFlight === 0 && !this.#gathering) {
        this.#gathering = true;
        // Let this turn's other takes (the polls one wake-up answers) join the batch.
        setImmediate(() => {
          this.#gathering = false;
          this.#start();
        });
      }
    });
  }

  /** Starts batches from the queue while fewer than `inFlight` run. */
  #start(): void {
    const most = this.#options.inFlight ?? 2;
    while (this.#inFlight < most && this.#queue.length > 0) {
      const jobs = this.#next();
      if (jobs.length === 0) return;
      this.#inFlight++;
      void this.#batch(jobs).finally(() => {
        this.#inFlight--;
        for (const job of jobs) this.#busy.delete(this.#options.subscriptionOf(job.item));
        this.#start();
      });
    }
  }

  /** The queue's oldest takes, one per subscription not in a batch in flight, up to the batch's size. */
  #next(): Job<I, R>[] {
    const max = this.#options.maxItems ?? 1_000;
    const batch: Job<I, R>[] = [];
    const later: Job<I, R>[] = [];
    for (const job of this.#queue) {
      const subscription = this.#options.subscriptionOf(job.item);
      if (batch.length < max && !this.#busy.has(subscription)) {
        this.#busy.add(subscription);
        batch.push(job);
      } else later.push(job);
    }
    this.#queue = later;
    return batch;
  }

  async #batch(jobs: Job<I, R>[]): Promise<void> {
    try {
      const results = await this.#options.run(jobs.map((job) => job.item));
      jobs.forEach((job, i) => job.resolve(results[i]));
    } catch (error) {
      if (!RETRIABLE.has(sqlState(error) ?? '')) {
        jobs.forEach((job) => job.reject(storeError(error)));
        return;
      }
      // Not awaited: the next batch need not wait for these.
      for (const job of jobs) this.#options.runAlone(job.item).then(job.resolve, job.reject);
    }
  }
}
