/**
 * PostgreSQL's tables as Kysely sees them (migrations/postgres/): SQLite's logical schema with
 * PostgreSQL types — bigint columns arrive as numbers (store/postgres/connections/pool.ts), flags as booleans.
 */
import type { Generated } from 'kysely';
import type { StoredHubProcess } from '../../../hub/ports/processes.js';
import type { PackageLogRow, RepositoryPackageRow } from '../../rows.js';

/** The last number given in each log: `state_objects` (seq), `messages` (id), `package_logs` (id). */
export interface LogHeadsTable {
  log: 'state_objects' | 'messages' | 'package_logs';
  seq: number;
}

export interface HubSettingsTable {
  key: string;
  value: string;
}

export interface PackageInstanceGroupsTable {
  sentinel_name: string;
  instance_name: string;
  group_name: string;
}

export interface ConfigurationVersionsTable {
  id: Generated<number>;
  written_at: string;
  written_by: string;
  reason: string;
  applied: boolean;
  text: string;
}

/** The configuration every process applies (one row; `pending`: posted, not yet reloaded). */
export interface ConfigurationDocumentTable {
  id: Generated<boolean>;
  version: number;
  text: string;
  pending: string | null;
}

export interface CallersTable {
  connection_id: string;
  friendly_name: string;
  kind: 'consumer' | 'package';
  sentinel_name: string;
  package_name: string;
  first_seen_ms: number;
}

export interface StateObjectsTable {
  sentinel_name: string;
  package_name: string;
  name: string;
  type: string;
  value: string;
  metadatas: string;
  last_update_ms: number;
  lifetime_s: number;
  expires_at_ms: number | null;
  expiry_announced: Generated<boolean>;
  seq: number;
  is_deleted: Generated<boolean>;
}

export interface SubscriptionsTable {
  id: string;
  kind: 'state_objects' | 'messages';
  owner_connection_id: string;
  credential_name: string;
  created_ms: number;
  last_active_ms: number;
  read_message_id: Generated<number>;
  /** A delivery in flight (hub/polls/deliveries.ts): its answer's token, or null when nothing is pending. */
  pending_token: string | null;
  /** When the pending delivery was taken. */
  pending_ms: number | null;
  /** Message subscriptions: the cursor before the pending delivery (where a redelivery reads from). */
  redeliver_from: number | null;
}

/** Patterns as the wire gives them (`*` any run); the `*_like` columns are generated from them. */
export interface StateObjectFiltersTable {
  id: Generated<number>;
  subscription_id: string;
  sentinel_pattern: string;
  package_pattern: string;
  name_pattern: string;
  type_pattern: string;
  sentinel_like: Generated<string>;
  package_like: Generated<string>;
  name_like: Generated<string>;
  type_like: Generated<string>;
  exact_name: string | null;
  read_seq: Generated<number>;
  created_seq: Generated<number>;
  /** The cursor before its subscription's pending delivery (meaningful only while one is pending). */
  redeliver_seq: number | null;
}

export interface MessageGroupMembersTable {
  subscription_id: string;
  group_name: string;
  joined_after: Generated<number>;
}

export interface SagaRequestsTable {
  connection_id: string;
  saga_id: string;
  received_ms: number;
}

export interface MessagesTable {
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

export type PackageLogsTable = PackageLogRow;

export interface PackageDescriptorsTable {
  sentinel_name: string;
  package_name: string;
  descriptor: string;
  declared_ms: number;
}

export type RepositoryPackagesTable = RepositoryPackageRow;

/** Each repository archive once per SHA-256, in chunks numbered from 0 (migration 0004). */
export interface RepositoryArchivesTable {
  sha256: string;
  chunk: number;
  data: Buffer;
}

/** Failed authentications per client address, across processes (migration 0006, unlogged). */
export interface AuthFailuresTable {
  address: string;
  count: number;
  last_ms: number;
}

/** `startedMs` → `started_ms`: a domain field as its column is named. */
type ColumnName<Field extends string> = Field extends `${infer Head}${infer Rest}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${ColumnName<Rest>}`
  : Field;

/** A table whose columns are a domain record's fields, snake_cased. */
type ColumnsOf<Record> = { [Field in keyof Record & string as ColumnName<Field>]: Record[Field] };

/** One row per running process (migration 0007): its last heartbeat, as the registry's port defines it. */
export type HubProcessesTable = ColumnsOf<StoredHubProcess>;

export interface PostgresDatabase {
  log_heads: LogHeadsTable;
  hub_settings: HubSettingsTable;
  package_instance_groups: PackageInstanceGroupsTable;
  configuration_versions: ConfigurationVersionsTable;
  configuration_document: ConfigurationDocumentTable;
  callers: CallersTable;
  state_objects: StateObjectsTable;
  subscriptions: SubscriptionsTable;
  state_object_filters: StateObjectFiltersTable;
  message_group_members: MessageGroupMembersTable;
  saga_requests: SagaRequestsTable;
  messages: MessagesTable;
  package_logs: PackageLogsTable;
  package_descriptors: PackageDescriptorsTable;
  repository_packages: RepositoryPackagesTable;
  repository_archives: RepositoryArchivesTable;
  auth_failures: AuthFailuresTable;
  hub_processes: HubProcessesTable;
}
