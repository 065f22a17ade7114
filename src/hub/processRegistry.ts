/**
 * The hub processes sharing this store, for the console's Server page (issue 22). Each process writes
 * its own row (host, pid, version, start, waiting polls) at its start and every `heartbeatMs`; a row
 * whose heartbeat is older than `aliveMs` is a process that stopped answering (shown, not alive), and
 * one silent for `forgetMs` is removed by the next heartbeat of any process. A process stopping cleanly
 * removes its own row. On SQLite the list is this one process.
 */
import crypto from 'node:crypto';
import os from 'node:os';
import type { ProcessRegistryStore, StoredHubProcess } from './ports/processes.js';

/** One process as the console lists it: its stored row, whether it still answers, and whether it is this one. */
export interface HubProcess extends StoredHubProcess {
  alive: boolean;
  /** The process answering this request. */
  self: boolean;
}

export interface ProcessRegistryOptions {
  /** Default 5 s. */
  heartbeatMs?: number;
  /** Default three heartbeats. */
  aliveMs?: number;
  /** Default 10 minutes. */
  forgetMs?: number;
}

export class ProcessRegistry {
  readonly id = crypto.randomUUID();
  readonly #startedMs = Date.now();
  readonly #heartbeatMs: number;
  readonly #aliveMs: number;
  readonly #forgetMs: number;
  #timer: NodeJS.Timeout | undefined;
  #beating: Promise<void> | undefined;
  #failing = false;

  constructor(
    private readonly store: ProcessRegistryStore,
    private readonly waitingPolls: () => number,
    private readonly version: string,
    private readonly log: { warn(object: object, message: string): void },
    options: ProcessRegistryOptions = {},
  ) {
    this.#heartbeatMs = options.heartbeatMs ?? 5_000;
    this.#aliveMs = options.aliveMs ?? 3 * this.#heartbeatMs;
    this.#forgetMs = options.forgetMs ?? 600_000;
  }

  /** Writes this process's row (failing when the store does), then heartbeats until `stop()`. */
  async start(): Promise<void> {
    await this.#beat();
    this.#timer ??= setInterval(() => void this.#heartbeat(), this.#heartbeatMs);
    this.#timer.unref();
  }

  /** Stops the heartbeats and removes this process's row (logged, not thrown, when the store fails). */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#beating;
    await this.store.remove(this.id, this.#forgetMs).catch((error: Error) => {
      this.log.warn({ err: error.message }, 'could not remove this process from the process list');
    });
  }

  async list(): Promise<HubProcess[]> {
    const rows = await this.store.list();
    return rows.map(({ heartbeatAgeMs, ...row }) => {
      const self = row.id === this.id;
      return {
        ...row,
        alive: self || heartbeatAgeMs <= this.#aliveMs,
        waitingPolls: self ? this.waitingPolls() : row.waitingPolls,
        self,
      };
    });
  }

  #heartbeat(): Promise<void> {
    this.#beating ??= this.#beat()
      .then(
        () => {
          this.#failing = false;
        },
        (error: Error) => {
          if (!this.#failing) this.log.warn({ err: error.message }, 'process heartbeat failed: retrying');
          this.#failing = true;
        },
      )
      .finally(() => (this.#beating = undefined));
    return this.#beating;
  }

  async #beat(): Promise<void> {
    await this.store.heartbeat({
      id: this.id,
      host: os.hostname(),
      pid: process.pid,
      version: this.version,
      startedMs: this.#startedMs,
      waitingPolls: this.waitingPolls(),
    });
    await this.store.remove(undefined, this.#forgetMs);
  }
}
