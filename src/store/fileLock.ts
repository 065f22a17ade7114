/**
 * An exclusive lock on a file for the life of the process, held through SQLite (whichever engine the
 * store runs on): an operating-system lock, which dies with its process, so one left by a crash is
 * simply taken over. The data directory's single-instance lock (src/dataDirectory.ts) is one.
 */
import Sqlite from 'better-sqlite3';
import { isSqliteBusy } from './sqlite/database/busy.js';

export interface FileLock {
  release(): void;
}

/** Holds `file` (which exists) for this process, with `holder` written in it; undefined when another process holds it. */
export function lockFile(file: string, holder: number): FileLock | undefined {
  const lock = new Sqlite(file, { timeout: 0 });
  try {
    lock.pragma('journal_mode = DELETE');
    lock.pragma('locking_mode = EXCLUSIVE');
    // The first write under EXCLUSIVE locking mode keeps the exclusive lock until the connection closes.
    lock.exec(
      'CREATE TABLE IF NOT EXISTS holder (pid INTEGER); DELETE FROM holder; INSERT INTO holder VALUES (' + holder + ')',
    );
  } catch (error) {
    lock.close();
    if (isSqliteBusy(error)) return undefined;
    throw error;
  }
  return {
    release() {
      if (lock.open) lock.close();
    },
  };
}
