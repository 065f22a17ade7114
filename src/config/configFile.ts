/** Reading and atomically replacing the configuration file on disk. */
import { randomBytes } from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { HubConfiguration } from './model.js';
import { defaultRecoveryOptions, openAuthorizations } from './model.js';

/**
 * A new version of a file, written beside it and flushed to disk, not yet in its place. The steps are
 * separate so that the caller can commit its tables between them: write+fsync, (commit), rename.
 * Asynchronous throughout: no request waits on an fsync.
 */
export interface StagedFile {
  /** Puts the new version in place (rename) and makes the rename durable (directory fsync). */
  install(): Promise<void>;
  /** Removes the staged copy (after a failure); never throws. */
  discard(): Promise<void>;
}

export async function stageFile(file: string, text: string): Promise<StagedFile> {
  const dir = path.dirname(file);
  await fsp.mkdir(dir, { recursive: true });
  const temp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await fsp.open(temp, 'w', 0o600);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await fsp.rm(temp, { force: true });
    throw error;
  } finally {
    await handle.close().catch(() => undefined);
  }
  return {
    async install() {
      await fsp.rename(temp, file);
      // The rename itself is durable only once the directory entry is on disk.
      const dirHandle = await fsp.open(dir, 'r');
      try {
        await dirHandle.sync();
      } finally {
        await dirHandle.close();
      }
    },
    discard: () => fsp.rm(temp, { force: true }).catch(() => undefined),
  };
}

/** Writes `text` so that a crash leaves either the old file or the new one, never a torn one. */
export async function writeFileAtomically(file: string, text: string): Promise<void> {
  const staged = await stageFile(file, text);
  try {
    await staged.install();
  } catch (error) {
    await staged.discard();
    throw error;
  }
}

export async function readConfigurationText(file: string): Promise<string | undefined> {
  try {
    return await fsp.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

export const generateAccessKey = () => randomBytes(24).toString('base64url');

/** What a first start writes: one administrator credential, listening on every interface, port 8088. */
export function defaultConfiguration(adminKey: string): HubConfiguration {
  return {
    listenUris: ['http://+:8088/'],
    recoveryOptions: { ...defaultRecoveryOptions },
    credentials: [
      {
        name: 'Admin',
        accessKey: adminKey,
        enable: true,
        enableControlHub: true,
        enableManagementAPI: true,
        enableDeveloperAccess: false,
        authorizations: openAuthorizations(),
      },
    ],
    sentinels: [],
    settingsGroups: [],
  };
}
