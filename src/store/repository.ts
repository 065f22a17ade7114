/** Metadata of the package repository's archives. */
import type { Kysely } from 'kysely';
import type { Database, RepositoryPackageRow } from '../db/schema.js';

type Executor = Kysely<Database>;

export async function listRepositoryPackages(db: Executor): Promise<RepositoryPackageRow[]> {
  return db.selectFrom('repository_packages').selectAll().orderBy('name').execute();
}

export async function findRepositoryPackage(db: Executor, name: string): Promise<RepositoryPackageRow | undefined> {
  return db.selectFrom('repository_packages').selectAll().where('name', '=', name).executeTakeFirst();
}

/** Stores a package, replacing the previous version of the same name; returns the replaced row. */
export async function replaceRepositoryPackage(db: Executor, row: RepositoryPackageRow): Promise<RepositoryPackageRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const previous = await findRepositoryPackage(trx, row.name);
    await trx
      .insertInto('repository_packages')
      .values(row)
      .onConflict((oc) => oc.column('name').doUpdateSet((eb) => ({
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
      })))
      .execute();
    return previous;
  });
}

export async function renameRepositoryPackage(db: Executor, name: string, newName: string): Promise<boolean> {
  const result = await db.updateTable('repository_packages').set({ name: newName }).where('name', '=', name).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteRepositoryPackage(db: Executor, name: string): Promise<RepositoryPackageRow | undefined> {
  return db.deleteFrom('repository_packages').where('name', '=', name).returningAll().executeTakeFirst();
}

export async function isArchiveReferenced(db: Executor, sha256: string): Promise<boolean> {
  const row = await db.selectFrom('repository_packages').select('name').where('sha256', '=', sha256).executeTakeFirst();
  return row !== undefined;
}
