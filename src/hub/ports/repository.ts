/** The package repository's port: the archives' metadata (each archive itself is a file named by its SHA-256). */

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

/** A change that may have left an archive nobody names: `unusedArchive` is its SHA-256 (delete the file after the commit). */
export interface RepositoryChange {
  unusedArchive?: string;
}

export interface RepositoryStore {
  list(): Promise<RepositoryPackage[]>;
  find(name: string): Promise<RepositoryPackage | undefined>;
  /** Stores the package, replacing the version of the same name. */
  replace(entry: RepositoryPackage): Promise<RepositoryChange>;
  /** 'missing': no package `name`; 'taken': another package is named `newName`. */
  rename(name: string, newName: string): Promise<'renamed' | 'missing' | 'taken'>;
  /** Undefined when there was no package `name`. */
  remove(name: string): Promise<RepositoryChange | undefined>;
}
