/**
 * Group commit. Work submitted during one turn of the event loop runs in one SQLite transaction, each
 * piece in its own savepoint (a failing piece rolls back alone and rejects alone); every promise settles
 * only after the COMMIT. One commit then pays for many pushes, sends and polls, and wake-ups go out
 * together. The batch holds Kysely's connection while it runs, so it never interleaves with a Kysely
 * transaction on the same connection.
 */
import type Sqlite from 'better-sqlite3';
import type { Db } from './open.js';

interface Job {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class TransactionBatcher {
  private queue: Job[] = [];
  private scheduled = false;

  constructor(
    private readonly db: Db,
    private readonly sqlite: Sqlite.Database,
    private readonly maxBatch = 512,
  ) {}

  /** Runs synchronous `work` inside the next batch transaction; resolves after that transaction commits. */
  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    const jobs = this.queue.splice(0, this.maxBatch);
    if (this.queue.length > 0) {
      this.scheduled = true;
      setImmediate(() => void this.flush());
    }
    const outcomes: { ok: boolean; value: unknown }[] = [];
    try {
      await this.db.connection().execute(async () => {
        this.sqlite.transaction(() => {
          for (const job of jobs) {
            try {
              outcomes.push({ ok: true, value: this.sqlite.transaction(job.work)() });
            } catch (error) {
              outcomes.push({ ok: false, value: error });
            }
          }
        }).immediate();
      });
    } catch (error) {
      // The commit itself failed: nothing of this batch is stored.
      jobs.forEach((job) => job.reject(error));
      return;
    }
    jobs.forEach((job, i) => (outcomes[i].ok ? job.resolve(outcomes[i].value) : job.reject(outcomes[i].value)));
  }
}
