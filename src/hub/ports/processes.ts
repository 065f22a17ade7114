/**
 * The hub processes sharing one store (issue 22): each process writes its own row every few seconds
 * (hub/processRegistry.ts); the console lists them. Times are the store's clock where it has one
 * (PostgreSQL's `now()`), so processes on machines whose clocks differ still agree on a row's age.
 * These are the one definition of a process's row: the PostgreSQL table (store/postgres/connections/schema.ts) and
 * the registry's list (hub/processRegistry.ts) are derived from them.
 */

/** A process's own counts, as of its last heartbeat (its Prometheus figures: each process counts its own). */
export interface HubProcessFigures {
  waitingPolls: number;
  /** HTTP requests answered since its start. */
  requests: number;
  /** Refused authentications since its start. */
  authFailures: number;
}

/** What a process says of itself at each heartbeat. */
export interface HubProcessReport extends HubProcessFigures {
  /** Random per start: a restarted process is a new row. */
  id: string;
  host: string;
  pid: number;
  /** Where it serves (`http://host:port/prefix`, a wildcard host named by the machine's host name); empty before it listens. */
  addresses: string[];
  version: string;
  startedMs: number;
}

/** A process's row as the store keeps it: its last report, stamped with the store's time. */
export interface StoredHubProcess extends HubProcessReport {
  /** Its last heartbeat. */
  heartbeatMs: number;
}

/** One process as it last reported itself. */
export interface HubProcessRow extends StoredHubProcess {
  /** How long ago that was, by the store's clock. */
  heartbeatAgeMs: number;
}

export interface ProcessRegistryStore {
  /** Writes (inserts or replaces) this process's row with the heartbeat time now. */
  heartbeat(report: HubProcessReport): Promise<void>;
  /** Every row that heartbeat within `silentMs`, oldest start first. */
  list(silentMs: number): Promise<HubProcessRow[]>;
  /** Removes the row of `id` (a process stopping cleanly) and those silent for longer than `silentMs`. */
  remove(id: string | undefined, silentMs: number): Promise<void>;
}
