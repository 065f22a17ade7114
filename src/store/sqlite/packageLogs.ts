/** Logs written by packages through WriteLog, on SQLite (the PackageLogStore). */
import type Sqlite from 'better-sqlite3';
import type { TransactionBatcher } from './database/batch.js';
import type { Db } from './database/open.js';
import type { LogQuery, PackageLogEntry, PackageLogStore } from '../../hub/ports/packageLogs.js';
import { packageLogEntryOf as entryOf } from '../rows.js';

/** WriteLog rides the group commit, so it waits out another process's write lock as pushes do. */
export class SqlitePackageLogStore implements PackageLogStore {
  private readonly insert;

  constructor(
    private readonly db: Db,
    sqlite: Sqlite.Database,
    private readonly batcher: TransactionBatcher,
  ) {
    this.insert = sqlite.prepare(`insert into package_logs (sentinel_name, package_name, level, message, logged_ms)
      values (@sentinel_name, @package_name, @level, @message, @logged_ms)`);
  }

  write(entry: Omit<PackageLogEntry, 'id'>): Promise<number> {
    const row = {
      sentinel_name: entry.sentinelName,
      package_name: entry.packageName,
      level: entry.level,
      message: entry.message,
      logged_ms: entry.loggedMs,
    };
    return this.batcher.run(() => Number(this.insert.run(row).lastInsertRowid));
  }

  async read(q: LogQuery): Promise<PackageLogEntry[]> {
    let query = this.db.selectFrom('package_logs').selectAll();
    if (q.sentinelName) query = query.where('sentinel_name', '=', q.sentinelName);
    if (q.packageName) query = query.where('package_name', '=', q.packageName);
    if (q.level) query = query.where('level', '=', q.level);
    if (q.sinceMs !== undefined) query = query.where('logged_ms', '>=', q.sinceMs);
    if (q.afterId !== undefined)
      return (await query.where('id', '>', q.afterId).orderBy('id').limit(q.limit).execute()).map(entryOf);
    const rows = await query.orderBy('id', 'desc').limit(q.limit).execute();
    return rows.reverse().map(entryOf);
  }

  /** One statement: everything up to the newest entry past the `keep` newest. */
  async trim(keep: number): Promise<number> {
    const result = await this.db
      .deleteFrom('package_logs')
      .where('id', '<=', (eb) => eb.selectFrom('package_logs').select('id').orderBy('id', 'desc').limit(1).offset(keep))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
