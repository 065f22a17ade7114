/** Files and directories only the hub's user may read: access keys live in them. */
import fs from 'node:fs';

export const PRIVATE_DIR = 0o700;
export const PRIVATE_FILE = 0o600;

/** Creates `dir` as 0700, or makes an existing one 0700 (a directory of an older hub was 0755). */
export function privateDirectory(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
  fs.chmodSync(dir, PRIVATE_DIR);
}

/** Makes `file` 0600 when it exists (hub.db and its -wal and -shm hold every access key in clear). */
export function privateFile(file: string): void {
  try {
    fs.chmodSync(file, PRIVATE_FILE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
