/**
 * Package logs on PostgreSQL (the PostgreSQL PackageLogStore): writes by group commit, numbered by the
 * log's head row (logs.ts), so a follow never skips one; reads one statement each.
 */
import type pg from 'pg';
import type { LogQuery, PackageLogEntry, PackageLogStore } from '../../../hub/ports/packageLogs.js';
import { GroupCommit } from '../connections/groupCommit.js';
import { appendPackageLogs } from '../connections/logs.js';
import type { OwnCommits } from '../feed/ownCommits.js';
import type { PostgresLog } from '../connections/pool.js';
import { type PackageLogRow, packageLogEntryOf as entryOf } from '../../rows.js';
import { query, storeError } from '../connections/transaction.js';

export class PostgresPackageLogStore implements PackageLogStore {
  readonly #writes: GroupCommit<Omit<PackageLogEntry, 'id'>, number>;

  constructor(
    private readonly pool: pg.Pool,
    log: PostgresLog,
    announce?: (client: pg.PoolClient) => Promise<void>,
    own?: OwnCommits,
    /** The pool of its group commit (this process's write connections); default `pool`. */
    writes: pg.Pool = pool,
  ) {
    this.#writes = new GroupCommit({
      pool: writes,
      log,
      oneStatement: true,
      write: (client, entries) =>
        appendPackageLogs(
          client,
          entries.map((e) => ({
            sentinel_name: e.sentinelName,
            package_name: e.packageName,
            level: e.level,
            message: e.message,
            logged_ms: e.loggedMs,
          })),
        ),
      onCommit: own && ((_, ids) => own.committed('package_logs', ids[0], ids[ids.length - 1])),
      afterCommit: announce && ((client) => announce(client)),
    });
  }

  write(entry: Omit<PackageLogEntry, 'id'>): Promise<number> {
    return this.#writes.submit(entry);
  }

  async read(q: LogQuery): Promise<PackageLogEntry[]> {
    const where: string[] = [];
    const values: unknown[] = [];
    const add = (condition: string, value: unknown) => {
      values.push(value);
      where.push(condition.replace('?', `$${values.length}`));
    };
    if (q.sentinelName) add('sentinel_name = ?', q.sentinelName);
    if (q.packageName) add('package_name = ?', q.packageName);
    if (q.level) add('level = ?', q.level);
    if (q.sinceMs !== undefined) add('logged_ms >= ?', q.sinceMs);
    if (q.afterId !== undefined) add('id > ?', q.afterId);
    values.push(q.limit);
    const filter = where.length > 0 ? `where ${where.join(' and ')}` : '';
    if (q.afterId !== undefined) {
      return (
        await query<PackageLogRow>(
          this.pool,
          `select * from package_logs ${filter} order by id limit $${values.length}`,
          values,
        )
      ).map(entryOf);
    }
    const rows = await query<PackageLogRow>(
      this.pool,
      `select * from package_logs ${filter} order by id desc limit $${values.length}`,
      values,
    );
    return rows.reverse().map(entryOf);
  }

  async trim(keep: number): Promise<number> {
    try {
      const result = await this.pool.query(
        'delete from package_logs where id <= (select id from package_logs order by id desc limit 1 offset $1)',
        [keep],
      );
      return result.rowCount ?? 0;
    } catch (error) {
      throw storeError(error);
    }
  }
}
