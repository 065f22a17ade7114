/**
 * The data directory belongs to one hub at a time, and only to the hub's user.
 *
 * The single-instance lock is an exclusive lock held on `hub.lock` for the life of the process
 * (store/fileLock.ts): two hubs on one file would each miss the other's pushes (long-polls wake on
 * in-process commits). An operating-system lock dies with its process, so a lock left by a crash
 * (kill -9, power cut) is simply taken over; `hub.pid` only names the holder for the second hub's message.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PRIVATE_DIR, PRIVATE_FILE, privateFile } from './privateFiles.js';
import { lockFile } from './store/fileLock.js';

export class DataDirectoryInUse extends Error {
  constructor(dataDir: string, pid: string | undefined) {
    super(`the data directory ${dataDir} is in use by another hub${pid ? ` (pid ${pid})` : ''}; stop that hub first`);
    this.name = 'DataDirectoryInUse';
  }
}

/**
 * The data directory is created 0700 when the hub creates it; an existing one keeps its mode, since it
 * may be a directory the user chose for more than the hub (`HUB_DATA_DIR=.`). What needs protecting in
 * it is private by its own mode (hub.db and its WAL, the configuration file, repository/, tmp/).
 */
export function dataDirectory(dir: string): void {
  if (existingDataDirectory(dir)) return;
  try {
    fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
  } catch (error) {
    throw new Error(`cannot create the data directory ${dir} (HUB_DATA_DIR): ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** Whether `dir` exists (false when not); throws, naming HUB_DATA_DIR, when it is a file or cannot be looked at. */
export function existingDataDirectory(dir: string): boolean {
  let found: fs.Stats | undefined;
  try {
    found = fs.statSync(dir, { throwIfNoEntry: false });
  } catch (error) {
    throw new Error(`cannot use the data directory ${dir} (HUB_DATA_DIR): ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (found && !found.isDirectory())
    throw new Error(`the data directory ${dir} is a file, not a directory: set HUB_DATA_DIR to a directory`);
  return found !== undefined;
}

export interface DataDirectoryLock {
  release(): void;
}

/** Takes the data directory for this process, or throws DataDirectoryInUse naming the holder's pid. */
export function lockDataDirectory(dataDir: string): DataDirectoryLock {
  dataDirectory(dataDir);
  const lockPath = path.join(dataDir, 'hub.lock');
  const pidFile = path.join(dataDir, 'hub.pid');
  // Created 0600 before the lock opens it (SQLite keeps the mode of an existing file).
  fs.closeSync(fs.openSync(lockPath, 'a', PRIVATE_FILE));
  privateFile(lockPath);
  const lock = lockFile(lockPath, process.pid);
  if (!lock) {
    let pid: string | undefined;
    try {
      pid = fs.readFileSync(pidFile, 'utf8').trim() || undefined;
    } catch {
      pid = undefined;
    }
    throw new DataDirectoryInUse(dataDir, pid);
  }
  fs.writeFileSync(pidFile, `${process.pid}\n`, { mode: PRIVATE_FILE });
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      fs.rmSync(pidFile, { force: true });
      lock.release();
    },
  };
}
