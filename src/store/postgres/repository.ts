/**
 * The repository's catalogue on PostgreSQL (the PostgreSQL RepositoryStore): reads one statement, each
 * change one transaction that also says which archive no package names any more.
 */
import type pg from 'pg';
import type { RepositoryChange, RepositoryPackage, RepositoryStore } from '../../hub/ports/repository.js';
import type { RepositoryPackagesTable as RepositoryRow } from './schema.js';
import { query, transaction } from './transaction.js';

const packageOf = (r: RepositoryRow): RepositoryPackage => ({
  name: r.name,
  version: r.version,
  description: r.description,
  author: r.author,
  fileName: r.file_name,
  size: r.size,
  sha256: r.sha256,
  uploadedMs: r.uploaded_ms,
  settings: r.settings,
  icon: r.icon,
  xsds: r.xsds,
});

/** The archive `sha256` when, inside the same transaction, no package names it any more. */
async function unusedArchive(client: pg.PoolClient, sha256: string | undefined): Promise<string | undefined> {
  if (sha256 === undefined) return undefined;
  const { rows } = await client.query('select 1 from repository_packages where sha256 = $1 limit 1', [sha256]);
  return rows.length === 0 ? sha256 : undefined;
}

export class PostgresRepositoryStore implements RepositoryStore {
  constructor(private readonly pool: pg.Pool) {}

  async list(): Promise<RepositoryPackage[]> {
    return (await query<RepositoryRow>(this.pool, 'select * from repository_packages order by name')).map(packageOf);
  }

  async find(name: string): Promise<RepositoryPackage | undefined> {
    const rows = await query<RepositoryRow>(this.pool, 'select * from repository_packages where name = $1', [name]);
    return rows[0] && packageOf(rows[0]);
  }

  replace(p: RepositoryPackage): Promise<RepositoryChange> {
    return transaction(this.pool, async (client) => {
      const previous = (
        await client.query<{ sha256: string }>('select sha256 from repository_packages where name = $1 for update', [
          p.name,
        ])
      ).rows[0];
      await client.query(
        `insert into repository_packages (name, version, description, author, file_name, size, sha256, uploaded_ms, settings, icon, xsds)
        values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
        on conflict (name) do update set version = excluded.version, description = excluded.description, author = excluded.author,
          file_name = excluded.file_name, size = excluded.size, sha256 = excluded.sha256, uploaded_ms = excluded.uploaded_ms,
          settings = excluded.settings, icon = excluded.icon, xsds = excluded.xsds`,
        [
          p.name,
          p.version,
          p.description,
          p.author,
          p.fileName,
          p.size,
          p.sha256,
          p.uploadedMs,
          p.settings,
          p.icon,
          p.xsds,
        ],
      );
      return { unusedArchive: await unusedArchive(client, previous?.sha256) };
    });
  }

  rename(name: string, newName: string): Promise<'renamed' | 'missing' | 'taken'> {
    return transaction(this.pool, async (client) => {
      if (
        (await client.query('select 1 from repository_packages where name = $1 for update', [name])).rows.length === 0
      )
        return 'missing';
      if (name === newName) return 'renamed';
      // The unique name decides between two processes renaming to the same name at once.
      const moved = await client
        .query(
          `update repository_packages set name = $2 where name = $1
        and not exists (select 1 from repository_packages where name = $2)`,
          [name, newName],
        )
        .catch((error: unknown) => {
          if ((error as { code?: string }).code === '23505') return { rowCount: 0 };
          throw error;
        });
      return (moved.rowCount ?? 0) > 0 ? 'renamed' : 'taken';
    });
  }

  remove(name: string): Promise<RepositoryChange | undefined> {
    return transaction(this.pool, async (client) => {
      const { rows } = await client.query<{ sha256: string }>(
        'delete from repository_packages where name = $1 returning sha256',
        [name],
      );
      if (rows.length === 0) return undefined;
      return { unusedArchive: await unusedArchive(client, rows[0].sha256) };
    });
  }
}
