/**
 * The configuration file on disk: read (`read…` functions take a path; `parse…` ones in xmlFile.ts and
 * offLoop.ts take text) and replaced atomically.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { ConfigurationFile, HubConfiguration } from './model.js';
import { defaultRecoveryOptions, openAuthorizations } from './model.js';
import { ConfigurationError, managementAccessProblem } from './validate.js';
import { parseConfigurationFile, serializeConfiguration } from './xmlFile.js';

/**
 * A new version of a file, written beside it and flushed to disk, not yet in its place. The steps are
 * separate so that the caller can commit its tables between them: write+fsync, (commit), rename.
 * Asynchronous throughout: no request waits on an fsync.
 */
export interface StagedFile {
  /**
   * Puts the new version in place (rename) and makes the rename durable (directory fsync). With
   * `unlessChangedFrom`, only while the file still holds that text (or is gone): the check and the
   * rename run in one turn of the event loop, so nothing in this process can write in between and an
   * editor elsewhere has microseconds, not the length of an await. Answers false when it did not.
   */
  install(unlessChangedFrom?: string): Promise<boolean>;
  /** Removes the staged copy (after a failure); never throws. */
  discard(): Promise<void>;
}

/**
 * Where a write must land: the file a symbolic link points to (an administrator's `/etc` link, a
 * config kept in another folder), so that the link stays a link; and the mode the user gave the file,
 * which a new version keeps (0600 for a file the hub creates: it holds access keys).
 */
async function target(file: string): Promise<{ real: string; mode: number }> {
  try {
    const real = await fsp.realpath(file);
    return { real, mode: (await fsp.stat(real)).mode & 0o777 };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { real: file, mode: 0o600 };
    throw error;
  }
}

/** A bind-mounted single file (a container's volume) cannot be replaced by a rename, only rewritten. */
const NOT_RENAMEABLE = new Set(['EBUSY', 'EXDEV']);

export async function stageFile(file: string, text: string): Promise<StagedFile> {
  const { real, mode } = await target(file);
  const dir = path.dirname(real);
  await fsp.mkdir(dir, { recursive: true });
  const temp = path.join(dir, `.${path.basename(real)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await fsp.open(temp, 'w', 0o600);
  try {
    await handle.writeFile(text);
    await handle.chmod(mode);
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await fsp.rm(temp, { force: true });
    throw error;
  } finally {
    await handle.close().catch(() => undefined);
  }
  return {
    async install(unlessChangedFrom) {
      try {
        if (unlessChangedFrom !== undefined) {
          const onDisk = readIfPresent(real);
          if (onDisk !== undefined && onDisk !== unlessChangedFrom) return false;
        }
        fs.renameSync(temp, real);
      } catch (error) {
        if (!NOT_RENAMEABLE.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
        // Not atomic, but the only way to change such a file; the staged copy stays until it is done.
        const inPlace = await fsp.open(real, 'r+');
        try {
          await inPlace.truncate(0);
          await inPlace.write(text, 0);
          await inPlace.sync();
        } finally {
          await inPlace.close();
        }
        await fsp.rm(temp, { force: true });
        return true;
      }
      // The rename itself is durable only once the directory entry is on disk.
      const dirHandle = await fsp.open(dir, 'r');
      try {
        await dirHandle.sync();
      } finally {
        await dirHandle.close();
      }
      return true;
    },
    discard: () => fsp.rm(temp, { force: true }).catch(() => undefined),
  };
}

function readIfPresent(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
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

/** The file's text, or undefined when there is no file. */
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

/** The configuration a hub starts with, its text, and the administrator's key if this start generated it. */
export interface StartingConfiguration {
  file: ConfigurationFile;
  text: string;
  generatedAdminKey?: string;
}

/**
 * A document a hub is to start with, parsed: throws ConfigurationError when it could not run a hub
 * (it does not read, or nobody could manage the hub).
 */
export function parseStartingDocument(text: string): ConfigurationFile {
  const file = parseConfigurationFile(text);
  const problem = managementAccessProblem(file.config);
  if (problem)
    throw new ConfigurationError(
      `${problem}. Give one credential enable="true" enableManagementAPI="true" in the file and start again.`,
    );
  return file;
}

/** The document of a first start with no file: the default one, with `adminKey` or a generated key. */
export function firstStartDocument(adminKey: string | undefined): StartingConfiguration {
  const generatedAdminKey = adminKey ? undefined : generateAccessKey();
  const config = defaultConfiguration(adminKey ?? (generatedAdminKey as string));
  const text = serializeConfiguration(config);
  return { file: { config, appSettings: {}, ignored: [] }, text, generatedAdminKey };
}

/**
 * Reads the configuration file; on a first start writes the default one (with `adminKey`, or a generated
 * key, handed to `keep` before the file is written). Throws ConfigurationError, before any database work,
 * when the file could not run a hub.
 */
export async function startingConfiguration(
  configPath: string,
  adminKey: string | undefined,
  keep: (generatedKey: string) => void = () => {},
): Promise<StartingConfiguration> {
  const text = await readConfigurationText(configPath);
  if (text !== undefined) return { file: parseStartingDocument(text), text };
  const first = firstStartDocument(adminKey);
  if (first.generatedAdminKey) keep(first.generatedAdminKey);
  await writeFileAtomically(configPath, first.text);
  return first;
}
