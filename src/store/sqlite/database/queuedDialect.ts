/**
 * Kysely's SQLite dialect with the single connection handed out in arrival order. Kysely's own driver
 * guards the connection with one shared promise that every waiter awaits: each release wakes all of
 * them and all but one go back to waiting, so N queued queries cost N² wake-ups (8,000 concurrent
 * queries took 3.2 s; a thousand devices subscribing at once after a restart would hit this). Here
 * waiters queue behind a FIFO mutex, each woken once; Kysely's inner lock is then never contended.
 *
 * Writes through Kysely wait out another process's write lock the way group-committed writes do
 * (store/sqlite/database/batch.ts): a transaction begins IMMEDIATE, so its writes can no longer meet the lock once it has
 * begun, and the BEGIN (or a statement outside a transaction, which did nothing when it failed) is
 * tried again every 50 ms without blocking the event loop, up to `lockWaitMs`.
 */
import { Mutex } from 'async-mutex';
import type { CompiledQuery, DatabaseConnection, Driver, QueryResult, SqliteDialectConfig } from 'kysely';
import { CompiledQuery as Query, SqliteDialect, SqliteDriver } from 'kysely';
import { isSqliteBusy, storeError } from './busy.js';

export interface LockWait {
  /** How long a write waits for another process's lock before failing with SQLITE_BUSY. */
  lockWaitMs: number;
  /** Whether the connection is inside a transaction (a statement there must not be retried alone). */
  inTransaction: () => boolean;
}

const RETRY_MS = 50;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class PatientConnection implements DatabaseConnection {
  constructor(
    private readonly inner: DatabaseConnection,
    private readonly wait: LockWait,
    /** Sleeps with the connection handed to whoever queued meanwhile (reads need not wait behind a blocked write). */
    private readonly pause: (ms: number) => Promise<void>,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const started = Date.now();
    for (;;) {
      try {
        return await this.inner.executeQuery<R>(query);
      } catch (error) {
        if (!isSqliteBusy(error)) throw error;
        // Past the wait (or inside a transaction, where a statement cannot be retried alone): DatabaseBusy.
        if (this.wait.inTransaction() || Date.now() - started >= this.wait.lockWaitMs) throw storeError(error);
        await this.pause(RETRY_MS);
      }
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

class QueuedSqliteDriver extends SqliteDriver {
  private readonly turns = new Mutex();
  private endTurn: (() => void) | undefined;

  constructor(
    config: SqliteDialectConfig,
    private readonly wait: LockWait | undefined,
  ) {
    super(config);
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    this.endTurn = await this.turns.acquire();
    const connection = await super.acquireConnection();
    return this.wait ? new PatientConnection(connection, this.wait, (ms) => this.pause(ms)) : connection;
  }

  /** Outside a transaction only: gives the connection up for `ms`, then waits for its turn again. */
  private async pause(ms: number): Promise<void> {
    await this.releaseConnection();
    await sleep(ms);
    this.endTurn = await this.turns.acquire();
    await super.acquireConnection();
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(Query.raw(this.wait ? 'begin immediate' : 'begin'));
  }

  override async releaseConnection(): Promise<void> {
    await super.releaseConnection();
    const endTurn = this.endTurn;
    this.endTurn = undefined;
    endTurn?.();
  }
}

export class QueuedSqliteDialect extends SqliteDialect {
  constructor(
    private readonly config: SqliteDialectConfig,
    private readonly wait?: LockWait,
  ) {
    super(config);
  }

  override createDriver(): Driver {
    return new QueuedSqliteDriver(this.config, this.wait);
  }
}
