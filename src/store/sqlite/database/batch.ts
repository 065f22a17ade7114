/**
 * Group commit. Work submitted during one turn of the event loop runs in one SQLite transaction; every
 * promise settles only after the COMMIT. Pieces must touch nothing but the database, and what the store
 * remembers of it, which a rollback resets (whenRolledBack): they may run twice. Should one throw, the
 * batch rolls back and runs again with a savepoint per piece, so a failing piece rolls back and
 * rejects alone. One commit then pays for many pushes, sends and polls,
 * and wake-ups go out together. A batch never interleaves with a Kysely transaction on the same
 * connection: while one is open, the batch waits for Kysely's connection.
 *
 * Whatever a batch's settlement sets off right away is the one exception to "one turn": the work its
 * settled promises' continuations submit before the microtask queue runs dry — any of them, not only
 * the reads of the polls its commit woke (also, say, a Subscribe's refresh or a request's next write) —
 * runs in a transaction of its own as soon as they have queued it, so a woken poll is answered
 * without waiting a turn of the event loop.
 *
 * A batch holds the event loop while its pieces run, so it has a time budget: once the pieces run so
 * far took longer than BATCH_BUDGET_MS, they commit and settle, and the rest of the batch runs in a
 * later turn of the event loop, after other requests, timers and wake-ups had theirs. The transaction
 * flushed right after a settlement has a budget of its own (flushAfterSettling): a turn that wakes
 * polls runs at most about two budgets.
 */
import type Sqlite from 'better-sqlite3';
import type { Db } from './open.js';
import { isSqliteBusy, storeError } from './busy.js';

interface Job {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

interface Outcome {
  ok: boolean;
  value: unknown;
}

/** A piece of work threw: the batch is retried with savepoints. */
class PieceFailed extends Error {
  constructor(readonly original: unknown) {
    super('a piece of the batch failed');
  }
}

/** Pause between attempts while another process holds the write lock. */
const LOCK_RETRY_MS = 50;

/**
 * Only a batch of at most this many pieces has what its settlement submits flushed in the same turn
 * (flushAfterSettling): a larger one says many requests arrived in this turn, whose own work already
 * took part of it (300 first polls at once: their requests, 300 lookups, then their reads would have
 * shared one turn; bench/stall.ts).
 */
const SMALL_BATCH = 16;

/** Pieces per transaction at most; the rest go into the next one. */
const MAX_PIECES = 4096;

/**
 * Once the pieces of one transaction have run this long, it commits and the remaining pieces wait for
 * a later turn. 10 ms keeps the event-loop stall of a storm (300 first polls of hostile filters at once
 * cost ~12 s back to back, issue 13) near one piece's cost above it, while a commit's own price (well
 * under a millisecond without fsync) stays small against the budget, so throughput barely changes.
 */
const BATCH_BUDGET_MS = 10;

export interface BatcherOptions {
  /** How long a batch waits for another process's write lock before its pieces fail with 503. */
  lockWaitMs?: number;
  /** Told the COMMIT's duration and how many pieces it carried, after every batch that committed. */
  committed?: (commitMs: number, pieces: number) => void;
  /** The time budget of one turn's pieces (BATCH_BUDGET_MS); tests that are not about it lift it. */
  budgetMs?: number;
}

export class TransactionBatcher {
  private queue: Job[] = [];
  private scheduled = false;
  /** A batch has just settled: what its continuations submit is flushed in a microtask (flushAfterSettling). */
  private settling = false;
  /** When the batch that opened the window started: the flush after it runs only within a budget of it. */
  private settlingSince = 0;
  // Prepared once: wrapping each job with better-sqlite3's transaction() would build closures per job.
  private readonly begin;
  private readonly commit;
  private readonly rollback;
  private readonly savepoint;
  private readonly release;
  private readonly rollbackToSavepoint;

  /** When the current wait for another process's write lock began. */
  private busySince: number | undefined;

  /** Told after a transaction rolled back, whole or to a piece's savepoint (whenRolledBack). */
  private rolledBack: (() => void) | undefined;

  private readonly lockWaitMs: number;
  private readonly committed: (commitMs: number, pieces: number) => void;
  private readonly budgetMs: number;

  constructor(
    private readonly db: Db,
    private readonly sqlite: Sqlite.Database,
    options: BatcherOptions = {},
  ) {
    this.lockWaitMs = options.lockWaitMs ?? 10_000;
    this.committed = options.committed ?? (() => {});
    this.budgetMs = options.budgetMs ?? BATCH_BUDGET_MS;
    this.begin = sqlite.prepare('BEGIN IMMEDIATE');
    this.commit = sqlite.prepare('COMMIT');
    this.rollback = sqlite.prepare('ROLLBACK');
    this.savepoint = sqlite.prepare('SAVEPOINT job');
    this.release = sqlite.prepare('RELEASE job');
    this.rollbackToSavepoint = sqlite.prepare('ROLLBACK TO job');
  }

  /**
   * What a store keeps in memory of the file in its pieces (takes/takeMemory.ts) is reset by `listener` after
   * any rollback: a piece's memory may then hold writes the file no longer does.
   */
  whenRolledBack(listener: () => void): void {
    this.rolledBack = listener;
  }

  /** Runs synchronous `work` inside the next batch transaction; resolves after that transaction commits. */
  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (this.settling) this.flushAfterSettling();
      else this.schedule();
    });
  }

  /**
   * Work submitted while a batch settles (by any continuation of its promises: the woken polls' reads,
   * but whatever else they queue too) runs in a transaction of its own as soon as those continuations
   * have queued it, instead of a turn of the event loop later: a woken poll is answered without first
   * waiting for the I/O of that turn. One such transaction per batch, so this can never keep the event
   * loop from I/O.
   */
  private flushAfterSettling(): void {
    if (this.busySince !== undefined) return this.schedule();
    this.settling = false;
    const turnStarted = this.settlingSince;
    queueMicrotask(() => {
      // Only while the batch that woke them and what its settlement ran since (the woken polls'
      // continuations) are still within the budget; then these pieces get a budget of their own, so one
      // turn runs at most about two. With what was left of one budget, the reads of the 1,000 polls
      // one push wakes (~9 µs each) were cut after ~650: the rest waited a turn, behind the I/O of the
      // answers already written (their devices' next polls), and the last device had its answer
      // 10–25 % later (bench, fan-out of StateObjects against the floor, 2026-12-07).
      if (performance.now() - turnStarted < this.budgetMs) void this.flush(false);
      else this.schedule();
    });
  }

  private schedule(): void {
    // While waiting for the lock, the retry timer flushes whatever has queued meanwhile.
    if (this.scheduled || this.busySince !== undefined) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  /**
   * `opensWindow`: what this batch's settlement submits runs right after it (flushAfterSettling), with
   * a budget of its own if this batch and its continuations stayed within the budget, so one turn of
   * the event loop runs at most about two budgets of work (bench/stall.ts); a batch that is large or
   * used up the budget leaves its followers to a later turn.
   */
  private async flush(opensWindow = true): Promise<void> {
    const jobs = this.queue.splice(0, MAX_PIECES);
    if (jobs.length === 0) return;
    if (this.queue.length > 0) this.schedule();
    let outcomes: Outcome[];
    let ran: Job[];
    let started: number;
    let spent: number;
    try {
      // A Kysely transaction still open on the connection (it awaits between its statements) must end
      // first: Kysely's connection mutex orders the batch after it. Otherwise the batch runs here and
      // now, synchronously, so nothing can come between its BEGIN and its COMMIT.
      started = performance.now();
      outcomes = this.sqlite.inTransaction
        ? await this.db.connection().execute(async () => this.runBatch(jobs))
        : this.runBatch(jobs);
      spent = performance.now() - started;
      // Past the time budget, the pieces not run yet go back to the head of the queue, for a later turn.
      ran = jobs.slice(0, outcomes.length);
      if (outcomes.length < jobs.length) {
        this.queue.unshift(...jobs.slice(outcomes.length));
        this.schedule();
      }
    } catch (error) {
      // The transaction itself failed: nothing of this batch is stored.
      if (isSqliteBusy(error)) return this.waitForLock(jobs, error);
      jobs.forEach((job) => job.reject(error));
      return;
    }
    if (this.busySince !== undefined) {
      this.busySince = undefined;
      if (this.queue.length > 0) this.schedule();
    }
    if (opensWindow && ran.length <= SMALL_BATCH && spent < this.budgetMs) {
      // Until the microtasks this settlement starts have all run (a tick queued from a microtask runs
      // only once the microtask queue is empty).
      this.settling = true;
      this.settlingSince = started;
      queueMicrotask(() => process.nextTick(() => (this.settling = false)));
    }
    ran.forEach((job, i) => (outcomes[i].ok ? job.resolve(outcomes[i].value) : job.reject(outcomes[i].value)));
  }

  /**
   * The jobs in one transaction without savepoints, as many as run within the time budget (at least
   * one); returns the outcomes of those that ran, in order. Should a piece fail, the transaction rolls
   * back and the same pieces run again with one savepoint each, so the failure stays its own.
   */
  private runBatch(jobs: Job[]): Outcome[] {
    let ran = 0;
    try {
      return this.inTransaction(() => {
        const started = performance.now();
        const outcomes: Outcome[] = [];
        for (const job of jobs) {
          try {
            outcomes.push({ ok: true, value: job.work() });
          } catch (error) {
            throw new PieceFailed(error);
          } finally {
            ran++;
          }
          if (performance.now() - started > this.budgetMs) break;
        }
        return outcomes;
      });
    } catch (error) {
      if (!(error instanceof PieceFailed)) throw error;
      return this.inTransaction(() => jobs.slice(0, ran).map((job) => this.runJob(job)));
    }
  }

  /**
   * Another process holds the write lock (BEGIN IMMEDIATE found it taken, so nothing ran): the jobs go
   * back to the head of the queue and the batch tries again shortly, the event loop free meanwhile.
   * Past `lockWaitMs` they fail with DatabaseBusy and the next batch starts a fresh wait.
   */
  private waitForLock(jobs: Job[], busy: unknown): void {
    const now = Date.now();
    this.busySince ??= now;
    if (now - this.busySince >= this.lockWaitMs) {
      this.busySince = undefined;
      const error = storeError(busy);
      jobs.forEach((job) => job.reject(error));
      if (this.queue.length > 0) this.schedule();
      return;
    }
    this.queue.unshift(...jobs);
    setTimeout(() => void this.flush(), LOCK_RETRY_MS);
  }

  private inTransaction<T extends unknown[]>(work: () => T): T {
    this.begin.run();
    try {
      const result = work();
      const started = performance.now();
      this.commit.run();
      this.committed(performance.now() - started, result.length);
      return result;
    } catch (error) {
      if (this.sqlite.inTransaction) this.rollback.run();
      this.rolledBack?.();
      throw error;
    }
  }

  /** One job in its own savepoint: its failure undoes only its own writes. */
  private runJob(job: Job): Outcome {
    this.savepoint.run();
    try {
      const value = job.work();
      this.release.run();
      return { ok: true, value };
    } catch (error) {
      this.rollbackToSavepoint.run();
      this.release.run();
      this.rolledBack?.();
      return { ok: false, value: error };
    }
  }
}
