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
  Version: string;
  StartedAt: string;
  LastHeartbeat: string;
  Alive: boolean;
  WaitingLongPolls: number;
  Self: boolean;
}
