/**
 * Wire records of the management endpoints made for the web console (docs/api.md). Types only and no
 * imports: the console (console/src/types.ts) imports them as they are, so server and console share one
 * definition.
 */

/** One row of `GET management/server/processes`. */
export interface HubProcessRecord {
  Id: string;
  Host: string;
  Pid: number;
  /** Where it serves: its listen addresses, a wildcard host named by its machine's host name. */
  Addresses: string[];
  Version: string;
  StartedAt: string;
  LastHeartbeat: string;
  Alive: boolean;
  /** Its own counts: the answering process's now, another's as of its last heartbeat. */
  WaitingLongPolls: number;
  RequestsTotal: number;
  AuthFailures: number;
  /** The process that answered this request. */
  Self: boolean;
}

/**
 * One row of `Connections` in `GET management/server/status`: a SignalR connection the answering process
 * holds now.
 */
export interface SignalRConnectionRecord {
  /** The connection id (the `ConnectionId` its messages carry as `Sender`). */
  Id: string;
  /** `<Sentinel>/<Package>` for a package, `Consumer/<PackageName>` for a consumer. */
  Who: string;
  /** The name of the credential it authenticated with (never its key). */
  Credential: string;
  /** The hubs it joined: ConsumerHub, ControlHub, ConstellationHub. */
  Hubs: string[];
  /** webSockets, serverSentEvents or longPolling; null between negotiate and connect. */
  Transport: string | null;
  /** When it connected. */
  Since: string;
}
