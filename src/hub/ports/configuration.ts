/**
 * The configuration's port: the history of the file's versions and the package instance groups message
 * addressing joins on. One operation (one transaction) per step of a configuration change.
 */
import type { HubConfiguration } from '../../config/model.js';

/** One version of the configuration file in its history. */
export interface ConfigurationVersion {
  writtenBy: string;
  reason: string;
  applied: boolean;
  text: string;
}

export interface ConfigurationStore {
  /**
   * A configuration applied from the file (start-up, reload): its groups replace the stored ones, and
   * `version` is recorded — unless `unlessNewest` and the newest version already has its text.
   */
  applied(version: ConfigurationVersion, config: HubConfiguration, options: { unlessNewest: boolean }): Promise<void>;
  /** A file written: records `version` (and, when given, the groups of `config`); returns the version's id. */
  record(version: ConfigurationVersion, config?: HubConfiguration): Promise<number>;
  /** Undoes `record` for a file that could not be put in place: the version goes, the groups become `config`'s when given. */
  revert(id: number, config?: HubConfiguration): Promise<void>;
}

/** The configuration document as the database holds it (PostgreSQL: shared by every hub process). */
export interface StoredConfiguration {
  /** Incremented by every change of the row. */
  version: number;
  /** The text every process applies. */
  text: string;
  /** A text sent with `POST configuration` that no reload has applied yet. */
  pending: string | undefined;
}

/**
 * The configuration document kept in the database (PostgreSQL): the same XML text the file holds in
 * SQLite mode, changed only by compare-and-set on its version; each change announced to the other
 * processes after its COMMIT.
 */
export interface ConfigurationDocumentStore {
  /** The document, or undefined when the database has none yet. */
  read(): Promise<StoredConfiguration | undefined>;
  /**
   * Stores `text` as the document (and `history`, and the groups of `config`) unless the database has one
   * already; answers the document stored, and whether it is this call's.
   */
  importIfNone(
    history: ConfigurationVersion,
    config: HubConfiguration,
  ): Promise<{ document: StoredConfiguration; imported: boolean }>;
  /**
   * Replaces document version `base` with `next` in one transaction with `history` (and, when given,
   * the groups of `config`); undefined, changing nothing, when the stored version is no longer `base`.
   */
  replace(
    base: number,
    next: { text: string; pending: string | undefined },
    history: ConfigurationVersion,
    config?: HubConfiguration,
  ): Promise<StoredConfiguration | undefined>;
}

/** The configuration kept in the store as one document that every process sharing it applies. */
export interface SharedConfigurationDocument {
  readonly documents: ConfigurationDocumentStore;
  /**
   * Hears every change of the document any process commits (this one's too) from now on; resolves
   * once listening. A hint: a lost one is made up by re-reading the document now and then.
   */
  onChanged(hear: () => void): Promise<void>;
}
