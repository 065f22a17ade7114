import type { HubProcessRecord, SignalRConnectionRecord } from '../../src/http/management/records.js';

/** The hub's wire records, as docs/api.md gives them. */
export interface StateObject {
  SentinelName: string;
  PackageName: string;
  Name: string;
  Type: string;
  Metadatas: Record<string, string>;
  LastUpdate: string;
  Lifetime: number;
  IsExpired: boolean;
  Value: unknown;
}

export interface StateObjectChange {
  StateObject: StateObject;
  IsDeleted?: boolean;
  IsExpired?: boolean;
}

export interface Message {
  Sender: { ConnectionId: string; Type: number; FriendlyName: string };
  Scope: { Scope: number; Args: string[]; SagaId: string | null };
  Key: string;
  Data: unknown;
}

export interface LogRecord {
  Id: number;
  SentinelName: string;
  PackageName: string;
  Level: 'Info' | 'Warn' | 'Error';
  Message: string;
  Date: string;
}

export interface DescriptorEntry {
  Name: string;
  TypeName: string;
  Description?: string | null;
  Type: 0 | 1 | 2;
  IsOptional?: boolean | null;
  DefaultValue?: unknown;
}

export interface TypeDescription {
  TypeName: string;
  TypeFullname: string;
  Description?: string | null;
  IsEnum?: boolean | null;
  IsArray?: boolean | null;
  IsGeneric?: boolean | null;
  GenericParameters?: string[] | null;
  EnumValues?: DescriptorEntry[] | null;
  Properties?: DescriptorEntry[] | null;
}

export interface MessageCallback {
  MessageKey: string;
  Description?: string | null;
  ResponseType?: string | null;
  Parameters?: DescriptorEntry[] | null;
}

export interface PackageDescriptor {
  PackageName: string;
  MessageCallbacks?: MessageCallback[] | null;
  MessageCallbackTypes?: TypeDescription[] | null;
  StateObjectTypes?: TypeDescription[] | null;
}

export interface DeclaredDescriptor {
  SentinelName: string;
  PackageName: string;
  Descriptor: PackageDescriptor;
}

export interface OverviewInstance {
  Name: string;
  Enable: boolean;
  Groups: string[];
  Connected: boolean;
  LastSeen: string | null;
  StateObjects: number;
  QueuedMessages: number;
  LastLog: { Level: string; Message: string; Date: string } | null;
}

export interface OverviewSentinel {
  Name: string;
  Credential: string;
  Packages: OverviewInstance[];
}

export interface ServerStatus {
  Version: string;
  StartedAt: string;
  UptimeSeconds: number;
  Now: string;
  WaitingLongPolls: number;
  RequestsTotal: number;
  AuthFailures: number;
  StateObjects: number;
  QueuedMessages: number;
  DroppedMessages: number;
  MessageSubscriptions: number;
  StateObjectSubscriptions: number;
  License: License;
  /** Every process, the one that answered (whose figures are the ones above) marked `Self`. */
  Processes: HubProcessRecord[];
  /** The SignalR connections the answering process holds now (not the other processes'). */
  Connections: SignalRConnectionRecord[];
}

/** One row of `management/server/processes`: the server's definition, shared (types only). */
export type { HubProcessRecord as HubProcess } from '../../src/http/management/records.js';

/** One SignalR connection of the answering process (`Connections` in `management/server/status`). */
export type { SignalRConnectionRecord as SignalRConnection } from '../../src/http/management/records.js';

export interface License {
  Licensee: string;
  Edition: string;
  ExpirationDate: string | null;
  MaxSentinels: number | null;
  MaxPackageInstances: number | null;
  IsExpired: boolean;
}

export interface Credential {
  Name: string;
  AccessKey?: string;
  Enable: boolean;
  EnableControlHub: boolean;
  EnableManagementAPI: boolean;
  EnableDeveloperAccess: boolean;
}

export interface Instance {
  Sentinel: string;
  Name: string;
  PackageFile: string | null;
  Enable: boolean;
  Credential: string | null;
  AutoStart: boolean;
  Groups: string[];
  IsVirtual: boolean;
  PackageFileMissing: boolean;
}

export interface Sentinel {
  Name: string;
  Credential: string;
  /** Instance names; `sentinels/{s}/packages` gives the instances. */
  Packages: string[];
}

export interface RepositoryPackage {
  Name: string;
  Version: string | null;
  Description: string | null;
  Author: string | null;
  FileName: string;
  Size: number;
  Sha256: string;
  UploadedAt: string;
  HasIcon: boolean;
  Settings: {
    Key: string;
    Type: string | null;
    Description: string | null;
    DefaultValue: string | null;
    HasXsd: boolean;
  }[];
}
