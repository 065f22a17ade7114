/** Logs written by packages through WriteLog. */
import type Sqlite from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { TransactionBatcher } from '../db/batch.js';
import type { Database, PackageLogRow } from '../db/schema.js';

type Executor = Kysely<Database>;

export interface LogQuery {
  sentinelName?: string;
  packageName?: string;
  level?: PackageLogRow['level'];
  sinceMs?: number;
  afterId?: number;
  limit: number;
}

/** WriteLog rides the group commit, so it waits out another process's write lock as pushes do. */
export class PackageLogStore {
  private readonly insert;

  constructor(sqlite: Sqlite.Database, private readonly batcher: TransactionBatcher) {
    this.insert = sqlite.prepare(`insert into package_logs (sentinel_name, package_name, level, message, logged_ms)
      values (@sentinel_name, @package_name, @level, @message, @logged_ms)`);
  }

  write(row: Omit<PackageLogRow, 'id'>): Promise<number> {
    return this.batcher.run(() => Number(this.insert.run(row).lastInsertRowid));
  }
}

/** The newest `limit` entries matching, returned oldest first (newest last). */
export async function queryLogs(db: Executor, q: LogQuery): Promise<PackageLogRow[]> {
  let query = db.selectFrom('package_logs').selectAll();
  if (q.sentinelName) query = query.where('sentinel_name', '=', q.sentinelName);
  if (q.packageName) query = query.where('package_name', '=', q.packageName);
  if (q.level) query = query.where('level', '=', q.level);
  if (q.sinceMs !== undefined) query = query.where('logged_ms', '>=', q.sinceMs);
  if (q.afterId !== undefined) {
    // Following: the oldest entries after the cursor, so none is skipped.
    return query.where('id', '>', q.afterId).orderBy('id').limit(q.limit).execute();
  }
  const rows = await query.orderBy('id', 'desc').limit(q.limit).execute();
  return rows.reverse();
}

/** Keeps the newest `keep` entries. */
export async function trimLogs(db: Executor, keep: number): Promise<number> {
  const boundary = await db
    .selectFrom('package_logs')
    .select('id')
    .orderBy('id', 'desc')
    .limit(1)
    .offset(keep)
    .executeTakeFirst();
  if (!boundary) return 0;
  const result = await db.deleteFrom('package_logs').where('id', '<=', boundary.id).executeTakeFirst();
  return Number(result.numDeletedRows);
}
