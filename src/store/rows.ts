/**
 * Rows both engines keep in the same columns, and how each becomes the domain's record: one mapping
 * per table, so the SQLite and the PostgreSQL store cannot drift apart in what they return.
 */
import type { SentMessage } from '../hub/messageAddresses.js';
import type { PackageLogEntry } from '../hub/ports/packageLogs.js';
import type { RepositoryPackage } from '../hub/ports/repository.js';
import type { StateObjectChange } from '../hub/ports/stateObjects.js';
import { ScopeType } from '../hub/scope.js';

export interface PackageLogRow {
  id: number;
  sentinel_name: string;
  package_name: string;
  level: PackageLogEntry['level'];
  message: string;
  logged_ms: number;
}

export const packageLogEntryOf = (r: PackageLogRow): PackageLogEntry => ({
  id: r.id,
  sentinelName: r.sentinel_name,
  packageName: r.package_name,
  level: r.level,
  message: r.message,
  loggedMs: r.logged_ms,
});

export interface RepositoryPackageRow {
  name: string;
  version: string;
  description: string;
  author: string;
  file_name: string;
  size: number;
  sha256: string;
  uploaded_ms: number;
  /** JSON: the manifest's setting definitions. */
  settings: string;
  icon: Buffer | null;
  /** JSON: setting key → XSD text. */
  xsds: string;
}

export const repositoryPackageOf = (r: RepositoryPackageRow): RepositoryPackage => ({
  name: r.name,
  version: r.version,
  description: r.description,
  author: r.author,
  fileName: r.file_name,
  size: r.size,
  sha256: r.sha256,
  uploadedMs: r.uploaded_ms,
  settings: r.settings,
  icon: r.icon,
  xsds: r.xsds,
});

export const repositoryRowOf = (p: RepositoryPackage): RepositoryPackageRow => ({
  name: p.name,
  version: p.version,
  description: p.description,
  author: p.author,
  file_name: p.fileName,
  size: p.size,
  sha256: p.sha256,
  uploaded_ms: p.uploadedMs,
  settings: p.settings,
  icon: p.icon,
  xsds: p.xsds,
});

/** What a StateObject log row tells of its change: the object's identity and type. */
export interface StateObjectChangeRow {
  sentinel_name: string;
  package_name: string;
  name: string;
  type: string;
}

export const stateObjectChangeOf = (r: StateObjectChangeRow): StateObjectChange => ({
  sentinelName: r.sentinel_name,
  packageName: r.package_name,
  name: r.name,
  type: r.type,
});

/** What a message log row tells of who it is for: its sender, scope and args, not its data. */
export interface SentMessageRow {
  id: number;
  sender_connection_id: string;
  scope: number;
  /** JSON: the scope's targets. */
  args: string;
}

export const sentMessageOf = (r: SentMessageRow): SentMessage => ({
  id: r.id,
  scope: r.scope,
  // Others and All name no targets in their args.
  args: r.scope <= ScopeType.Sentinel ? (JSON.parse(r.args) as string[]) : [],
  senderConnectionId: r.sender_connection_id,
});
