/**
 * The hub processes sharing this store, for the console's Server page (issues 22 and 30). Each process
 * writes its own row (host, pid, addresses, version, start, and its own counts: waiting polls,
 * requests, refused authentications) at its start, once it listens, and every `heartbeatMs`; any
 * process reads everyone's rows, so the page shows each process's figures in its own row whichever
 * process serves it. A row whose heartbeat is older than `aliveMs` is a process that stopped answering
 * (shown, not alive); one silent for `forgetMs` is no longer listed, and is deleted by the next
 * heartbeat of any process. A process stopping cleanly removes its own row. On SQLite the list is this
 * one process.
 */
import crypto from 'node:crypto';
import os from 'node:os';
import type { HubProcessFigures, ProcessRegistryStore, StoredHubProcess } from './ports/processes.js';

/** One process as the console lists it: its stored row, whether it still answers, and whether it is this one. */
export interface HubProcess extends StoredHubProcess {
  alive: boolean;
  /** The process answering this request: its figures are counted now, the others' as of their heartbeat. */
  self: boolean;
}

export interface ProcessRegistryOptions {
  /** Default 5 s. */
  heartbeatMs?: number;
  /** Default three heartbeats. */
  aliveMs?: number;
  /** Default 60 s; at least two heartbeats. */
  forgetMs?: number;
}

export class ProcessRegistry {
  readonly id = crypto.randomUUID();
  readonly startedMs = Date.now();
  readonly #heartbeatMs: number;
  readonly #aliveMs: number;
  readonly #forgetMs: number;
  #addresses: string[] = [];
  #timer: NodeJS.Timeout | undefined;
  #beating: Promise<void> | undefined;
  #failing = false;

  constructor(
    private readonly store: ProcessRegistryStore,
    private readonly figures: () => Promise<HubProcessFigures>,
    private readonly version: string,
    private readonly log: { warn(object: object, message: string): void },
    options: ProcessRegistryOptions = {},
  ) {
    this.#heartbeatMs = options.heartbeatMs ?? 5_000;
    this.#aliveMs = options.aliveMs ?? 3 * this.#heartbeatMs;
    this.#forgetMs = Math.max(options.forgetMs ?? 60_000, 2 * this.#heartbeatMs);
  }

  /** Writes this process's row (failing when the store does), then heartbeats until `stop()`. */
  async start(): Promise<void> {
    await this.#beat();
    this.#timer ??= setInterval(() => void this.#heartbeat(), this.#heartbeatMs);
    this.#timer.unref();
  }

  /** Where this process serves, written into its row at once (a failure is logged; the next heartbeat retries). */
  async listening(addresses: string[]): Promise<void> {
    this.#addresses = addresses;
    await this.#beating;
    await this.#heartbeat();
  }

  /** Stops the heartbeats and removes this process's row (logged, not thrown, when the store fails). */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#beating;
    await this.store.remove(this.id, this.#forgetMs).catch((error: Error) => {
      this.log.warn({ err: error.message }, 'could not remove this process from the process list');
    });
  }

  /** Every listed process, this one's figures counted now (its row is added should the store have lost it). */
  async list(): Promise<HubProcess[]> {
    const [rows, figures] = await Promise.all([this.store.list(this.#forgetMs), this.figures()]);
    const processes = rows.map(({ heartbeatAgeMs, ...row }): HubProcess => ({
      ...row,
      alive: heartbeatAgeMs <= this.#aliveMs,
      self: false,
    }));
    const self = processes.find((p) => p.id === this.id);
    const now = { ...this.#report(figures), heartbeatMs: self?.heartbeatMs ?? Date.now(), alive: true, self: true };
    if (self) Object.assign(self, now);
    else processes.push(now);
    return processes;
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

  #report(figures: HubProcessFigures) {
    return {
      id: this.id,
      host: os.hostname(),
      pid: process.pid,
      addresses: this.#addresses,
      version: this.version,
      startedMs: this.startedMs,
      ...figures,
    };
  }

  async #beat(): Promise<void> {
    await this.store.heartbeat(this.#report(await this.figures()));
    await this.store.remove(undefined, this.#forgetMs);
  }
}
