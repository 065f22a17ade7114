/** The database as Kysely sees it: one interface per table (columns in snake_case, see docs/schema.md). */
import type { Generated, Selectable } from 'kysely';
import type { RepositoryPackageRow } from '../../rows.js';

export interface HubSettingsTable {
  key: string;
  value: string;
}

/** The groups of each package instance, as the configuration says: message fan-out to a group joins them. */
export interface PackageInstanceGroupsTable {
  sentinel_name: string;
  instance_name: string;
  group_name: string;
}

/** Every version of the configuration file the hub applied, wrote or was sent (newest kept; see docs/configuration.md). */
export interface ConfigurationVersionsTable {
  id: Generated<number>;
  /** ISO 8601, UTC. */
  written_at: string;
  /** The credential that made the change, or `(start)` / `(file)` for what the hub found on disk. */
  written_by: string;
  reason: string;
  /** 1 when this text became the applied configuration; 0 for a file posted and not yet reloaded. */
  applied: number;
  text: string;
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
  expiry_announced: Generated<number>;
  /** The sequence number of the object's last change (push, purge, expiry): its place in the log. */
  seq: Generated<number>;
  /** 1: a tombstone left by a purge, kept until every cursor has passed it. */
  is_deleted: Generated<number>;
}

export interface SubscriptionsTable {
  id: string;
  kind: 'state_objects' | 'messages';
  owner_connection_id: string;
  credential_name: string;
  created_ms: number;
  last_active_ms: number;
  queued_messages: Generated<number>;
  /** Message subscriptions: the id of the last message of the log read (or skipped as not addressed). */
  read_message_id: Generated<number>;
  /** A delivery in flight (hub/polls/deliveries.ts): its answer's token, or null when nothing is pending. */
  pending_token: string | null;
  /** When the pending delivery was taken. */
  pending_ms: number | null;
  /** Message subscriptions: the cursor before the pending delivery (where a redelivery reads from). */
  redeliver_from: number | null;
}

export interface StateObjectFiltersTable {
  id: Generated<number>;
  subscription_id: string;
  sentinel_glob: string;
  package_glob: string;
  name_glob: string;
  type_glob: string;
  exact_name: string | null;
  /** The cursor: changes up to this sequence number have been read. */
  read_seq: Generated<number>;
  /** The sequence when the filter was added: older tombstones are not news to it. */
  created_seq: Generated<number>;
  /** The cursor before its subscription's pending delivery (meaningful only while one is pending). */
  redeliver_seq: number | null;
}

export interface StateObjectChangesTable {
  id: Generated<number>;
  subscription_id: string;
  sentinel_name: string;
  package_name: string;
  name: string;
  type: string;
  is_deleted: number;
}

export interface MessageGroupMembersTable {
  subscription_id: string;
  group_name: string;
  /** The last message id when the group was joined: only later messages reach the member. */
  joined_after: Generated<number>;
}

export interface SagaRequestsTable {
  connection_id: string;
  saga_id: string;
  received_ms: number;
}

export interface MessagesTable {
  id: Generated<number>;
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

export interface MessageDeliveriesTable {
  id: Generated<number>;
  subscription_id: string;
  message_id: number;
}

export interface PackageLogsTable {
  id: Generated<number>;
  sentinel_name: string;
  package_name: string;
  level: 'Info' | 'Warn' | 'Error';
  message: string;
  logged_ms: number;
}

export interface PackageDescriptorsTable {
  sentinel_name: string;
  package_name: string;
  descriptor: string;
  declared_ms: number;
}

/** The same columns on both engines (src/store/rows.ts). */
export type RepositoryPackagesTable = RepositoryPackageRow;

export interface Database {
  hub_settings: HubSettingsTable;
  package_instance_groups: PackageInstanceGroupsTable;
  configuration_versions: ConfigurationVersionsTable;
  callers: CallersTable;
  state_objects: StateObjectsTable;
  subscriptions: SubscriptionsTable;
  state_object_filters: StateObjectFiltersTable;
  state_object_changes: StateObjectChangesTable;
  message_group_members: MessageGroupMembersTable;
  messages: MessagesTable;
  message_deliveries: MessageDeliveriesTable;
  saga_requests: SagaRequestsTable;
  package_logs: PackageLogsTable;
  package_descriptors: PackageDescriptorsTable;
  repository_packages: RepositoryPackagesTable;
}

export type SubscriptionRow = Selectable<SubscriptionsTable>;
