/**
 * The store's operations as the hub sees them: the seam a second engine (PostgreSQL, next) implements.
 * Each operation is one transaction whose promise settles after its COMMIT; nothing here exposes a
 * statement, a transaction or a connection, and the hub receives nothing but these interfaces and the
 * domain types beside them. The SQLite implementations (one class per interface, in the module named
 * after it) are listed in docs/architecture.md, "The store owns its transactions"; createHub.ts wires
 * them.
 */
import type { HubConfiguration } from '../config/model.js';
import type { MessageAddresses } from './messageAddresses.js';

export interface StateObjectKey {
  sentinelName: string;
  packageName: string;
  name: string;
}

/**
 * A StateObject filter as the wire gives it, over the four keys: `*` stands for any run of characters
 * (none included) and every other character, `?` and `[` too, for itself (src/wildcard.ts). Each engine
 * evaluates these in its own terms (SQLite: escaped GLOBs, store/sqliteGlob.ts) and gives stored
 * filters back in this form.
 */
export interface StateObjectPatterns {
  sentinel: string;
  package: string;
  name: string;
  type: string;
}

/**
 * A StateObject as the store keeps it: value and metadatas as JSON text, times in epoch ms. (The field
 * names are the columns': an engine hands the rows it read to the wire records with no copy per row.)
 */
export interface StoredStateObject {
  sentinel_name: string;
  package_name: string;
  name: string;
  type: string;
  value: string;
  metadatas: string;
  last_update_ms: number;
  lifetime_s: number;
}

/** One object a poll returns: its latest value, or its purge. */
export interface StateObjectChange extends StateObjectKey {
  type: string;
  /** Unset when the object was purged (or is gone): the record goes out with `IsDeleted`. */
  current: StoredStateObject | undefined;
}

export interface StateObjectWrite extends StateObjectKey {
  type: string;
  /** JSON text. */
  value: string;
  /** JSON text. */
  metadatas: string;
  lastUpdateMs: number;
  lifetimeS: number;
  expiresAtMs: number | null;
}

/** A StateObject a commit changed (pushed, purged or expired): what the notifier matches filters against. */
export type ChangedStateObject = StateObjectKey & { type: string };


/** A message as the log keeps it: args and data as JSON text. (Field names as for StoredStateObject.) */
export interface StoredMessage {
  id: number;
  sender_connection_id: string;
  sender_type: number;
  sender_friendly_name: string;
  scope: number;
  args: string;
  saga_id: string | null;
  key: string;
  data: string;
  sent_ms: number;
}

export type NewMessage = Omit<StoredMessage, 'id'>;

/** The key of a saga reply (wire.md). */
export const SAGA_RESPONSE_KEY = '__Response';

export interface TakenMessages {
  messages: StoredMessage[];
  /** Log entries that left the retention before this subscription read them (0 normally). */
  missed: number;
}

export type SubscriptionKind = 'state_objects' | 'messages';

/** Whose subscription it is: the caller's ConnectionId and the credential it authenticated with. */
export interface SubscriptionOwner {
  connectionId: string;
  credentialName: string;
}

export interface OpenedSubscription {
  id: string;
  /** StateObject subscriptions: a filter was added (its first poll has news). */
  added: boolean;
}

/** What a waiting poll listens for: its filters, or its message addresses. */
export type Interest =
  | { kind: 'state_objects'; filters: StateObjectPatterns[] }
  | { kind: 'messages'; addresses: MessageAddresses };

/**
 * Tells a poll that its client went away: AbortSignal's `aborted` and its 'abort' listener object. An
 * AbortSignal is one; the HTTP layer passes a lighter object (http/context.ts: an EventTarget per
 * waiting poll costs about 1 KB).
 */
export interface ClientSignal {
  readonly aborted: boolean;
  /**
   * As on an AbortSignal: every listener added and not removed is called once when the signal fires,
   * in the order added; adding the same listener again changes nothing; one added after it fired is
   * never called (check `aborted` first). `once` is implied: the signal fires at most once.
   */
  addEventListener(type: 'abort', listener: EventListenerObject, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: EventListenerObject): void;
}

/** StateObjects as a log with one sequence; subscriptions read it through a cursor per filter. */
export interface StateObjectLog {
  push(write: StateObjectWrite): Promise<void>;
  /** The producer's objects matching the name and type patterns become tombstones; returns them. */
  purge(producer: { sentinelName: string; packageName: string }, patterns: { name: string; type: string }): Promise<ChangedStateObject[]>;
  /** Announces objects whose lifetime ran out (a change in the log); returns them. */
  expire(now: number): Promise<ChangedStateObject[]>;
  /** Reads past the subscription's cursors and moves them, in one transaction; rejects with ClientGone (nothing consumed) if `abort` fired. */
  take(subscription: string, limit: number, abort: ClientSignal): Promise<StateObjectChange[]>;
}

/** Messages as one ordered log with bounded retention; each subscription reads it through its cursor. */
export interface MessageLog {
  /** Appends; with `sagaReplyBy`, only as the answer to an unanswered saga request that caller received (else 403). */
  send(message: NewMessage, options?: { sagaReplyBy?: string; refusal?: string }): Promise<number>;
  take(subscription: string, limit: number, abort: ClientSignal): Promise<TakenMessages>;
  /** Housekeeping: what every cursor has passed, what is past the age limit. */
  sweep(now: number): Promise<number>;
}

export interface SubscriptionRegistry {
  /** Opens (or reuses) the owner's subscription and adds the filter, unless it has it already. */
  openStateObjects(owner: SubscriptionOwner, requestedId: string | undefined, filter: StateObjectPatterns): Promise<OpenedSubscription>;
  openMessages(owner: SubscriptionOwner, requestedId: string | undefined, group?: string): Promise<OpenedSubscription>;
  /** The owner's subscription of that kind with what a poll of it listens for (touched), or undefined. */
  findOwned(owner: SubscriptionOwner, id: string, kind: SubscriptionKind): Promise<Interest | undefined>;
  touched(id: string): Promise<void>;
}

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

/** The logs packages write (WriteLog); management reads and follows them. */
export interface PackageLogBook {
  /** Returns the entry's Id. */
  write(entry: Omit<PackageLogEntry, 'id'>): Promise<number>;
  /** The newest `limit` entries matching (with `afterId`: the oldest after it), oldest first. */
  read(query: LogQuery): Promise<PackageLogEntry[]>;
  /** Keeps the newest `keep` entries; returns how many went. */
  trim(keep: number): Promise<number>;
}

/** StateObjects read outside the log: RequestStateObjects and the expiry timer. */
export interface StateObjectReads {
  /** The current (not purged) objects matching the patterns, by sentinel, package and name. */
  current(patterns: StateObjectPatterns): Promise<StoredStateObject[]>;
  /** The earliest expiry not yet announced, in epoch ms. */
  nextExpiry(): Promise<number | undefined>;
}

/** A caller identity as first seen; its ConnectionId stays the same across requests and restarts. */
export interface NewCaller {
  connectionId: string;
  friendlyName: string;
  kind: 'consumer' | 'package';
  sentinelName: string;
  packageName: string;
  firstSeenMs: number;
}

export interface CallerBook {
  /** The ConnectionId on record for the friendly name; records nothing. */
  connectionId(friendlyName: string): Promise<string | undefined>;
  /** Records the caller unless its friendly name is known already; either way returns the ConnectionId on record. */
  record(caller: NewCaller): Promise<string>;
}

export interface InstanceKey {
  sentinelName: string;
  packageName: string;
}

/** Package descriptors (JSON text), one per package instance: a later declaration replaces the earlier. */
export interface DescriptorBook {
  save(instance: InstanceKey, descriptor: string, now: number): Promise<void>;
  find(instance: InstanceKey): Promise<string | undefined>;
  /** Every declared descriptor, by sentinel and package name. */
  all(): Promise<(InstanceKey & { descriptor: string })[]>;
}

/** Per-instance activity for the console's overview. */
export interface InstanceActivity {
  stateObjects: (InstanceKey & { n: number })[];
  /** Unread messages and the last poll or subscribe, per caller identity. */
  subscriptions: (InstanceKey & { queued: number; lastActiveMs: number })[];
  /** The newest WriteLog entry of each instance that wrote one. */
  lastLogs: (InstanceKey & { level: LogLevel; message: string; loggedMs: number })[];
}

export interface ActivityReport {
  instances(): Promise<InstanceActivity>;
}

/** Settings the hub keeps in the database rather than the file. */
export interface HubSettings {
  /** The license as it was set (JSON text), or undefined for none. */
  license(): Promise<string | undefined>;
  setLicense(text: string): Promise<void>;
}

export interface ExpiredSubscription {
  id: string;
  kind: string;
  credentialName: string;
  friendlyName: string;
}

/** The sweeper's operations: idle time counted only while the hub runs, idle subscriptions, tombstones. */
export interface Housekeeping {
  /** Start-up: moves every subscription's idle clock forward by the time since the last heartbeat, and records one. */
  discountDowntime(now: number): Promise<void>;
  /**
   * Records the heartbeat, removes subscriptions idle since before `idleCutoff` (except `keep`, those
   * with a waiting poll) and tombstones every cursor has passed or older than `tombstoneCutoff`.
   */
  sweepSubscriptions(now: number, idleCutoff: number, keep: string[], tombstoneCutoff: number): Promise<ExpiredSubscription[]>;
  heartbeat(now: number): Promise<void>;
}

/** One version of the configuration file in its history. */
export interface ConfigurationVersion {
  writtenBy: string;
  reason: string;
  applied: boolean;
  text: string;
}

/**
 * What the database keeps of the configuration: the history of the file's versions and the package
 * instance groups message addressing joins on. One operation per step of a configuration change.
 */
export interface ConfigurationHistory {
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

/** A package of the repository (the archive itself is a file named by its SHA-256). */
export interface RepositoryPackage {
  name: string;
  version: string;
  description: string;
  author: string;
  fileName: string;
  size: number;
  sha256: string;
  uploadedMs: number;
  /** JSON: the manifest's setting definitions. */
  settings: string;
  icon: Buffer | null;
  /** JSON: setting key → XSD text. */
  xsds: string;
}

/** A change that may have left an archive nobody names: `unusedArchive` is its SHA-256 (delete the file after the commit). */
export interface RepositoryChange {
  unusedArchive?: string;
}

export interface RepositoryCatalog {
  list(): Promise<RepositoryPackage[]>;
  find(name: string): Promise<RepositoryPackage | undefined>;
  /** Stores the package, replacing the version of the same name. */
  replace(entry: RepositoryPackage): Promise<RepositoryChange>;
  /** 'missing': no package `name`; 'taken': another package is named `newName`. */
  rename(name: string, newName: string): Promise<'renamed' | 'missing' | 'taken'>;
  /** Undefined when there was no package `name`. */
  remove(name: string): Promise<RepositoryChange | undefined>;
}

/** Row counts for the metrics, read at scrape time. */
export interface StoreCounts {
  subscriptions: { kind: string; n: number }[];
  queuedMessages: number;
  stateObjects: number;
}

/**
 * A whole engine: every interface above, built once per hub by the engine's opener (SQLite:
 * store/sqliteStore.ts) and handed out by createHub.ts.
 */
export interface HubStore {
  stateObjects: StateObjectLog;
  stateObjectReads: StateObjectReads;
  messages: MessageLog;
  subscriptions: SubscriptionRegistry;
  packageLogs: PackageLogBook;
  callers: CallerBook;
  descriptors: DescriptorBook;
  activity: ActivityReport;
  settings: HubSettings;
  housekeeping: Housekeeping;
  configuration: ConfigurationHistory;
  repository: RepositoryCatalog;
  counts(): Promise<StoreCounts>;
  /** Stops the engine's own upkeep and closes it, leaving everything committed on disk. */
  close(): Promise<void>;
}
