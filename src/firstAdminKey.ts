/**
 * The Admin access key a first start generated, kept until a start has succeeded. A first start can fail
 * after its configuration holding that key is written (a port in use, PostgreSQL gone, a kill): the key
 * must not be lost with it. So it is written to HUB_DATA_DIR/first-admin-key (0600) before the
 * configuration that holds it; every start that finds the file and whose configuration still lets that
 * key manage the hub shows it; the CLI removes the file once a start that listens has shown it.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { HubConfiguration } from './config/model.js';
import { PRIVATE_FILE, privateFile } from './privateFiles.js';

const FILE_NAME = 'first-admin-key';

export interface FirstAdminKey {
  key: string;
  /** Where it is kept until a start has succeeded. */
  file: string;
}

const firstAdminKeyFile = (dataDir: string) => path.join(dataDir, FILE_NAME);

/** Keeps `key` in the data directory, readable by the hub's user only. */
export function keepFirstAdminKey(dataDir: string, key: string): void {
  const file = firstAdminKeyFile(dataDir);
  fs.writeFileSync(file, `${key}\n`, { mode: PRIVATE_FILE });
  // A file left by an earlier first start keeps its mode on write: make it private all the same.
  privateFile(file);
}

/** The kept key, when there is one (whatever the configuration says now). */
export function keptFirstAdminKey(dataDir: string): FirstAdminKey | undefined {
  const file = firstAdminKeyFile(dataDir);
  let key: string;
  try {
    key = fs.readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return key ? { key, file } : undefined;
}

/**
 * The kept key while no start has succeeded since the first, if `config` still lets it manage the hub;
 * a key the configuration no longer accepts (edited, or another process's first start won) is forgotten.
 */
export function pendingFirstAdminKey(dataDir: string, config: HubConfiguration): FirstAdminKey | undefined {
  const kept = keptFirstAdminKey(dataDir);
  if (!kept) return undefined;
  const manages = config.credentials.some((c) => c.accessKey === kept.key && c.enable && c.enableManagementAPI);
  if (manages) return kept;
  forgetFirstAdminKey(kept);
  return undefined;
}

export function forgetFirstAdminKey(kept: FirstAdminKey): void {
  fs.rmSync(kept.file, { force: true });
}
