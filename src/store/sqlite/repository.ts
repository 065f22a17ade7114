/**
 * The package repository on SQLite (the RepositoryStore): the catalogue in `repository_packages`, each
 * archive a file `<sha256>.zip` in the repository folder beside hub.db. Order of work keeps a crash
 * harmless: the archive is renamed into place and the folder fsynced before the catalogue commits, and
 * an archive is deleted only after the commit that stopped naming it; `tidy()` (at start-up) removes
 * archives no package names.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Db } from './database/open.js';
import type { RepositoryPackage, RepositoryStore } from '../../hub/ports/repository.js';
import { privateDirectory } from '../../privateFiles.js';
import { type RepositoryPackageRow, repositoryPackageOf as packageOf, repositoryRowOf as rowOf } from '../rows.js';

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

function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Renames `from` to `to`, or copies it (its bytes on disk) when they are on different file systems. */
function moveDurably(from: string, to: string): void {
  try {
    fs.renameSync(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    const part = `${to}.part`;
    fs.copyFileSync(from, part);
    const fd = fs.openSync(part, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(part, to);
  }
}

export class SqliteRepositoryStore implements RepositoryStore {
  /** `dir`: the archives' folder (created, private). */
  constructor(
    private readonly db: Db,
    private readonly dir: string,
  ) {
    privateDirectory(dir);
  }

  private file(sha256: string): string {
    return path.join(this.dir, `${sha256}.zip`);
  }

  /** After the commit that stopped naming it. */
  private removeArchive(sha256: string | undefined): void {
    if (sha256 !== undefined) fs.rmSync(this.file(sha256), { force: true });
  }

  async tidy(): Promise<string[]> {
    const used = new Set((await this.list()).map((p) => `${p.sha256}.zip`));
    const removed = fs.readdirSync(this.dir).filter((file) => !used.has(file));
    for (const file of removed) fs.rmSync(path.join(this.dir, file), { recursive: true, force: true });
    return removed;
  }

  async fileNames(): Promise<string[]> {
    const rows = await this.db.selectFrom('repository_packages').select(['name', 'file_name']).execute();
    return rows.flatMap((r) => [r.name, r.file_name]);
  }

  async archive(sha256: string): Promise<Readable | undefined> {
    // Open first: a deletion after this point leaves the open file readable to its end.
    const handle = await fs.promises.open(this.file(sha256), 'r').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    return handle?.createReadStream();
  }

  async list(): Promise<RepositoryPackage[]> {
    return (await this.db.selectFrom('repository_packages').selectAll().orderBy('name').execute()).map(packageOf);
  }

  async find(name: string): Promise<RepositoryPackage | undefined> {
    const row = await findRow(this.db, name);
    return row && packageOf(row);
  }

  async replace(entry: RepositoryPackage, archivePath: string): Promise<void> {
    // The same hash is the same bytes: replacing a file another package names changes nothing.
    moveDurably(archivePath, this.file(entry.sha256));
    fsyncDir(this.dir);
    const unused = await this.db.transaction().execute(async (trx) => {
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
      return unusedArchive(trx, previous?.sha256);
    });
    this.removeArchive(unused);
  }

  rename(name: string, newName: string): Promise<'renamed' | 'missing' | 'taken'> {
    return this.db.transaction().execute(async (trx) => {
      if (!(await findRow(trx, name))) return 'missing';
      if (name !== newName && (await findRow(trx, newName))) return 'taken';
      await trx.updateTable('repository_packages').set({ name: newName }).where('name', '=', name).execute();
      return 'renamed';
    });
  }

  async remove(name: string): Promise<boolean> {
    const outcome = await this.db.transaction().execute(async (trx) => {
      const row = await trx
        .deleteFrom('repository_packages')
        .where('name', '=', name)
        .returning('sha256')
        .executeTakeFirst();
      if (!row) return undefined;
      return { unused: await unusedArchive(trx, row.sha256) };
    });
    if (!outcome) return false;
    this.removeArchive(outcome.unused);
    return true;
  }
}
