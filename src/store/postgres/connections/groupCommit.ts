/**
 * Group commit on PostgreSQL (the engine's counterpart of store/sqlite/database/batch.ts): items submitted while a batch
 * is in flight form the next batch, written by **one** `write(client, items)` (one set-based statement,
 * so a log's head row is held for one statement plus COMMIT, logs.ts) in one transaction; every
 * promise settles only after that COMMIT. One batch in flight per instance: one connection of the pool
 * at a time.
 *
 * - A batch whose statement fails is rolled back and its items run again one transaction each, so a
 *   failing item rejects alone (items must touch nothing but the database: they may run twice).
 * - A deadlock or serialization failure (40P01, 40001) runs the whole batch again, up to 3 times; a
 *   lock_timeout (55P03) or statement timeout (57014) fails the whole batch at once.
 * - A connection lost before COMMIT fails the batch (nothing stored); a COMMIT whose answer was lost is
 *   an unknown outcome and fails too: both as DatabaseBusy (503; a retried push is idempotent).
 * - `oneStatement`: `write` is a single statement, so it runs as its own transaction (autocommit): one
 *   round trip instead of BEGIN, the statement and COMMIT. Its answer arrives only after the implicit
 *   COMMIT (node-postgres settles a query at ReadyForQuery, which PostgreSQL sends after committing),
 *   and an error of the COMMIT is the statement's error; the promises still settle after the COMMIT.
 *   A row lock it takes (a log's head) is held only inside PostgreSQL, never across a round trip.
 * - `onCommit` runs synchronously after the COMMIT, before the promises settle (this process's own
 *   record of what it committed, ownCommits.ts).
 * - `afterCommit` runs after the promises settled, on the same connection, before it goes back to the
 *   pool: the place for the NOTIFY doorbell (listener.ts), outside the transaction. The next batch does
 *   not wait for it (it starts on another connection); while one runs, later batches' after-steps
 *   coalesce into one more run after it (with the latest batch's items): a doorbell is a hint.
 */
import type pg from 'pg';
import type { PostgresLog } from './pool.js';
import { isConnectionLost, sqlState, storeError } from './transaction.js';

export interface GroupCommitOptions<I, R> {
  pool: pg.Pool;
  /** Writes every item of a batch (in order) and returns one result per item, in order. */
  write(client: pg.PoolClient, items: I[]): Promise<R[]>;
  /** `write` is one statement: run it without BEGIN/COMMIT (see the file's comment). */
  oneStatement?: boolean;
  /** Synchronously after the COMMIT, before the promises settle. */
  onCommit?(items: I[], results: R[]): void;
  /** After the COMMIT and the settling of its promises (awaited by neither them nor the next batch). */
  afterCommit?(client: pg.PoolClient, items: I[], results: R[]): Promise<void>;
  /** Told each COMMIT's duration in ms and the items it carried (metrics). */
  committed?(commitMs: number, items: number): void;
  /** Items per transaction at most; the rest form the next. Default 1,000. */
  maxItems?: number;
  log: PostgresLog;
}

interface Job<I, R> {
  item: I;
  resolve(result: R): void;
  reject(error: unknown): void;
}

const RETRIABLE = new Set(['40P01', '40001']);
/** Failures that would only repeat for each item alone (a lock not had in time, a statement timeout). */
const WHOLE_BATCH = new Set(['55P03', '57014']);
const ATTEMPTS = 3;

export class GroupCommit<I, R> {
  #queue: Job<I, R>[] = [];
  #running = false;
  #transactions = 0;
  /** An after-step is running; `#again` holds the latest batch that committed meanwhile. */
  #afterRunning = false;
  #again: { items: I[]; results: R[] } | undefined;
  readonly #options: GroupCommitOptions<I, R>;

  constructor(options: GroupCommitOptions<I, R>) {
    this.#options = options;
  }

  /** Resolves with the item's result after the transaction that wrote it committed. */
  submit(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      if (!this.#running) {
        this.#running = true;
        // Let this turn's other submissions join the batch.
        setImmediate(() => void this.#drain());
      }
    });
  }

  /** Transactions committed (a metric: items per transaction = items / transactions). */
  get transactions(): number {
    return this.#transactions;
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const jobs = this.#queue.splice(0, this.#options.maxItems ?? 1_000);
        await this.#batch(jobs);
      }
    } finally {
      this.#running = false;
    }
  }

  async #batch(jobs: Job<I, R>[]): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.#options.pool.connect();
    } catch (error) {
      jobs.forEach((job) => job.reject(storeError(error)));
      return;
    }
    let broken: unknown;
    /** The connection was handed to the after-step, which releases it. */
    let handedOver = false;
    try {
      const items = jobs.map((job) => job.item);
      for (let attempt = 1; ; attempt += 1) {
        try {
          const results = await this.#transaction(client, items);
          jobs.forEach((job, i) => job.resolve(results[i]));
          handedOver = this.#after(client, items, results);
          return;
        } catch (error) {
          if (error instanceof CommitFailed || isConnectionLost(error)) {
            broken = error;
            jobs.forEach((job) => job.reject(storeError(error instanceof CommitFailed ? error.cause : error)));
            return;
          }
          if (WHOLE_BATCH.has(sqlState(error) ?? '')) {
            jobs.forEach((job) => job.reject(storeError(error)));
            return;
          }
          if (RETRIABLE.has(sqlState(error) ?? '') && attempt < ATTEMPTS) continue;
          if (jobs.length === 1) {
            jobs[0].reject(error);
            return;
          }
          break;
        }
      }
      // One failed: each alone, so that the failure stays its own.
      for (const job of jobs) {
        try {
          const [result] = await this.#transaction(client, [job.item]);
          job.resolve(result);
          this.#afterLater([job.item], [result]);
        } catch (error) {
          job.reject(storeError(error instanceof CommitFailed ? error.cause : error));
          if (error instanceof CommitFailed || isConnectionLost(error)) {
            broken = error;
            jobs
              .slice(jobs.indexOf(job) + 1)
              .forEach((rest) => rest.reject(storeError(error instanceof CommitFailed ? error.cause : error)));
            return;
          }
        }
      }
    } finally {
      if (!handedOver) client.release(broken instanceof Error ? broken : undefined);
    }
  }

  async #transaction(client: pg.PoolClient, items: I[]): Promise<R[]> {
    if (this.#options.oneStatement) return this.#autocommit(client, items);
    await client.query('begin');
    let results: R[];
    try {
      results = await this.#options.write(client, items);
    } catch (error) {
      if (!isConnectionLost(error)) await client.query('rollback').catch(() => {});
      throw error;
    }
    const started = performance.now();
    try {
      await client.query('commit');
    } catch (error) {
      throw new CommitFailed(error);
    }
    this.#options.committed?.(performance.now() - started, items.length);
    this.#transactions += 1;
    this.#options.onCommit?.(items, results);
    return results;
  }

  /**
   * The write alone, committed by PostgreSQL as it answers. A lost connection is an unknown outcome, as
   * a lost COMMIT is (CommitFailed); any other error rolled the statement back.
   */
  async #autocommit(client: pg.PoolClient, items: I[]): Promise<R[]> {
    const started = performance.now();
    let results: R[];
    try {
      results = await this.#options.write(client, items);
    } catch (error) {
      throw isConnectionLost(error) ? new CommitFailed(error) : error;
    }
    this.#options.committed?.(performance.now() - started, items.length);
    this.#transactions += 1;
    this.#options.onCommit?.(items, results);
    return results;
  }

  /**
   * Starts the after-step on `client` (which it releases) unless one is running: then this batch's
   * joins the next run and `client` is not taken (false: the caller releases it).
   */
  #after(client: pg.PoolClient, items: I[], results: R[]): boolean {
    if (!this.#options.afterCommit) return false;
    if (this.#afterRunning) {
      this.#again = { items, results };
      return false;
    }
    this.#afterRunning = true;
    void (async () => {
      let broken: Error | undefined;
      try {
        for (let next: { items: I[]; results: R[] } | undefined = { items, results }; next;) {
          this.#again = undefined;
          try {
            await this.#options.afterCommit?.(client, next.items, next.results);
          } catch (error) {
            if (isConnectionLost(error)) broken = error as Error;
            this.#options.log.warn(
              { err: (error as Error).message },
              'PostgreSQL group commit: the step after COMMIT failed',
            );
            if (broken) return;
          }
          next = this.#again;
        }
      } finally {
        this.#afterRunning = false;
        client.release(broken);
        // Committed while the last run was ending on a broken connection: on a fresh one.
        if (this.#again) this.#afterLater(this.#again.items, this.#again.results);
      }
    })();
    return true;
  }

  /** The after-step of a batch whose connection is not free for it: on a connection of its own. */
  #afterLater(items: I[], results: R[]): void {
    if (!this.#options.afterCommit) return;
    if (this.#afterRunning) {
      this.#again = { items, results };
      return;
    }
    this.#options.pool.connect().then(
      (client) => {
        if (!this.#after(client, items, results)) client.release();
      },
      (error: unknown) =>
        this.#options.log.warn(
          { err: (error as Error).message },
          'PostgreSQL group commit: no connection for the step after COMMIT',
        ),
    );
  }
}

/** COMMIT sent and no answer: the outcome is unknown. */
class CommitFailed extends Error {
  constructor(override readonly cause: unknown) {
    super('COMMIT failed: outcome unknown');
  }
}
