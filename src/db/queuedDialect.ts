/**
 * Kysely's SQLite dialect with the single connection handed out in arrival order. Kysely's own driver
 * guards the connection with one shared promise that every waiter awaits: each release wakes all of
 * them and all but one go back to waiting, so N queued queries cost N² wake-ups (8,000 concurrent
 * queries took 3.2 s; a thousand devices subscribing at once after a restart would hit this). Here
 * waiters queue behind a FIFO mutex, each woken once; Kysely's inner lock is then never contended.
 */
import { Mutex } from 'async-mutex';
import type { DatabaseConnection, Driver, SqliteDialectConfig } from 'kysely';
import { SqliteDialect, SqliteDriver } from 'kysely';

class QueuedSqliteDriver extends SqliteDriver {
  private readonly turns = new Mutex();
  private endTurn: (() => void) | undefined;

  override async acquireConnection(): Promise<DatabaseConnection> {
    this.endTurn = await this.turns.acquire();
    return super.acquireConnection();
  }

  override async releaseConnection(): Promise<void> {
    await super.releaseConnection();
    const endTurn = this.endTurn;
    this.endTurn = undefined;
    endTurn?.();
  }
}

export class QueuedSqliteDialect extends SqliteDialect {
  constructor(private readonly config: SqliteDialectConfig) {
    super(config);
  }

  override createDriver(): Driver {
    return new QueuedSqliteDriver(this.config);
  }
}
