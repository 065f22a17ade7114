/** Metadata of the package repository's archives on SQLite (the RepositoryStore). */
import type { Db } from '../../db/open.js';
import type { RepositoryPackageRow } from '../../db/schema.js';
import type { RepositoryChange, RepositoryPackage, RepositoryStore } from '../../hub/ports/repository.js';

const packageOf = (r: RepositoryPackageRow): RepositoryPackage => ({
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

const rowOf = (p: RepositoryPackage): RepositoryPackageRow => ({
  name: p.name,
  version: p.version,
  description: p.description,
  author: p.author,
  file_name: p.fileName,
  size: p.size,
  sha256: p.sha256,
  uploaded_ms: p.uploadedMs,
  settings: p.settings,
  icon: p.icon,
  xsds: p.xsds,
});

async function findRow(db: Db, name: string): Promise<RepositoryPackageRow | undefined> {
  return db.selectFrom('repository_packages').selectAll().where('name', '=', name).executeTakeFirst();
}

/** The archive `sha256` when, inside the same transaction, no package names it any more. */
async function unusedArchive(trx: Db, sha256: string | undefined): Promise<string | undefined> {
  if (sha256 === undefined) return undefined;
  const row = await trx
    .selectFrom('repository_packages')
    .select('name')
    .where('sha256', '=', sha256)
    .executeTakeFirst();
  return row === undefined ? sha256 : undefined;
}

export class SqliteRepositoryStore implements RepositoryStore {
  constructor(private readonly db: Db) {}

  async list(): Promise<RepositoryPackage[]> {
    return (await this.db.selectFrom('repository_packages').selectAll().orderBy('name').execute()).map(packageOf);
  }

  async find(name: string): Promise<RepositoryPackage | undefined> {
    const row = await findRow(this.db, name);
    return row && packageOf(row);
  }

  replace(entry: RepositoryPackage): Promise<RepositoryChange> {
    return this.db.transaction().execute(async (trx) => {
      const previous = await findRow(trx, entry.name);
      await trx
        .insertInto('repository_packages')
        .values(rowOf(entry))
        .onConflict((oc) =>
          oc.column('name').doUpdateSet((eb) => ({
            version: eb.ref('excluded.version'),
            description: eb.ref('excluded.description'),
            author: eb.ref('excluded.author'),
            file_name: eb.ref('excluded.file_name'),
            size: eb.ref('excluded.size'),
            sha256: eb.ref('excluded.sha256'),
            uploaded_ms: eb.ref('excluded.uploaded_ms'),
            settings: eb.ref('excluded.settings'),
            icon: eb.ref('excluded.icon'),
            xsds: eb.ref('excluded.xsds'),
          })),
        )
        .execute();
      return { unusedArchive: await unusedArchive(trx, previous?.sha256) };
    });
  }

  rename(name: string, newName: string): Promise<'renamed' | 'missing' | 'taken'> {
    return this.db.transaction().execute(async (trx) => {
      if (!(await findRow(trx, name))) return 'missing';
      if (name !== newName && (await findRow(trx, newName))) return 'taken';
      await trx.updateTable('repository_packages').set({ name: newName }).where('name', '=', name).execute();
      return 'renamed';
    });
  }

  remove(name: string): Promise<RepositoryChange | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .deleteFrom('repository_packages')
        .where('name', '=', name)
        .returning('sha256')
        .executeTakeFirst();
      if (!row) return undefined;
      return { unusedArchive: await unusedArchive(trx, row.sha256) };
    });
  }
}
