/** Reading and atomically replacing the configuration file on disk. */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { HubConfiguration } from './model.js';
import { defaultRecoveryOptions, openAuthorizations } from './model.js';

/** Writes `text` so that a crash leaves either the old file or the new one, never a torn one. */
export function writeFileAtomically(file: string, text: string | Buffer): void {
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true });
  const temp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fd = fs.openSync(temp, 'w', 0o600);
  try {
    fs.writeSync(fd, typeof text === 'string' ? Buffer.from(text) : text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temp, file);
  // The rename itself is durable only once the directory entry is on disk.
  const dirFd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(dirFd);
  } finally {
    fs.closeSync(dirFd);
  }
}

export function readConfigurationText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
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
