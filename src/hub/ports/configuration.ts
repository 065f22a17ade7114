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
