/**
 * The package repository's port: the catalogue and the archives' bytes. Where the bytes live is the
 * engine's business: SQLite keeps each archive as a file named by its SHA-256 beside hub.db, PostgreSQL
 * keeps it in the database (docs/repository.md "Storage"). An archive is stored once however many
 * packages name it, and removed with the last change that stops naming it.
 */
import type { Readable } from 'node:stream';

export interface RepositoryPackage {
  name: string;
  version: string;
  description: string;
  author: string;
  fileName: string;
  size: number;
  sha256: string;
  uploadedMs: number;
  /** JSON: the manifest's setting definitions. */
  settings: string;
  icon: Buffer | null;
  /** JSON: setting key → XSD text. */
  xsds: string;
}

export interface RepositoryStore {
  list(): Promise<RepositoryPackage[]>;
  find(name: string): Promise<RepositoryPackage | undefined>;
  /** The name and the file name of every package (what an instance's PackageFile may name). */
  fileNames(): Promise<string[]>;
  /**
   * Stores the package with its archive, replacing the package of the same name. `archivePath` is the
   * validated archive, whose SHA-256 is `entry.sha256`; the call may move it away (the caller removes
   * whatever is left). Settles once both are durable.
   */
  replace(entry: RepositoryPackage, archivePath: string): Promise<void>;
  /** 'missing': no package `name`; 'taken': another package is named `newName`. */
  rename(name: string, newName: string): Promise<'renamed' | 'missing' | 'taken'>;
  /** False when there was no package `name`. */
  remove(name: string): Promise<boolean>;
  /**
   * The bytes of the archive `sha256`, read as the stream is consumed; undefined when no archive has
   * that hash. A stream that cannot be finished (the archive deleted meanwhile) ends with an error.
   */
  archive(sha256: string): Promise<Readable | undefined>;
  /** At start-up: removes what a crash can leave behind; says what it removed (for the log). */
  tidy(): Promise<string[]>;
}
