/** The package logs' port: what packages write (WriteLog); management reads and follows it. */
export type LogLevel = 'Info' | 'Warn' | 'Error';

/** One WriteLog entry as stored. */
export interface PackageLogEntry {
  id: number;
  sentinelName: string;
  packageName: string;
  level: LogLevel;
  message: string;
  loggedMs: number;
}

export interface LogQuery {
  sentinelName?: string;
  packageName?: string;
  level?: LogLevel;
  sinceMs?: number;
  /** Following: the oldest entries after this Id (so none is skipped) instead of the newest. */
  afterId?: number;
  limit: number;
}

export interface PackageLogStore {
  /** Returns the entry's Id (after the commit). */
  write(entry: Omit<PackageLogEntry, 'id'>): Promise<number>;
  /** The newest `limit` entries matching (with `afterId`: the oldest after it), oldest first. */
  read(query: LogQuery): Promise<PackageLogEntry[]>;
  /** Keeps the newest `keep` entries; returns how many went. */
  trim(keep: number): Promise<number>;
}
