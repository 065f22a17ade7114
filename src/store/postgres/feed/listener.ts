/**
 * The doorbell between hub processes on one PostgreSQL (issue 22): a write batch commits, then sends a
 * tiny NOTIFY on channel `hub` (after the COMMIT, never inside it: inside, every committer of the
 * cluster queues on PostgreSQL's notification lock). A notification is a hint, never the data: the
 * tail reader (tailReader.ts) reads the database above its own cursors.
 *
 * `PostgresListener` keeps one dedicated connection per process (`hub:<pid>:listen`, not from a pool:
 * a pool would close it when idle) that LISTENs on each channel of its map (channel → handler of the
 * payload; `listen` adds one, on the live connection and on every later one). It sends a heartbeat query every `heartbeatMs` and
 * counts the connection lost when the heartbeat has no answer within `heartbeatTimeoutMs` (a silent
 * network drop), on an `error` or on `end` (pg_terminate_backend, a PostgreSQL restart). It then
 * reconnects with exponential backoff and jitter (half to all of the delay), until `stop()`. After every (re)LISTEN
 * it calls `onReady`, after the LISTEN, so that a reader started there misses nothing: what was
 * committed while the connection was down is read then, what is committed afterwards is announced.
 */
import pg from 'pg';
import type { PostgresConnectionOptions } from '../connections/pool.js';
import { clientConfig } from '../connections/pool.js';

export const HUB_CHANNEL = 'hub';

/** What to do with a notification's payload on one channel. */
export type NotificationHandler = (payload: string) => void;

export interface ListenerOptions extends Omit<PostgresConnectionOptions, 'role'> {
  /** Default `listen`. */
  role?: string;
  /** Channel → handler: the channels listened on from the first LISTEN (`listen` adds more later). */
  channels: Record<string, NotificationHandler>;
  /** Default 5 s. */
  heartbeatMs?: number;
  /** Default 2 s. */
  heartbeatTimeoutMs?: number;
  /** First reconnect delay (default 100 ms), doubled at each failed attempt up to `maxBackoffMs` (default 10 s). */
  firstBackoffMs?: number;
  maxBackoffMs?: number;
  /** After each LISTEN of every channel, the first included. */
  onReady(): void;
}

export class PostgresListener {
  #client: pg.Client | undefined;
  #stopped = false;
  #reconnects = 0;
  #wakeSleeper: (() => void) | undefined;
  #interrupt: (() => void) | undefined;
  #loop: Promise<void> | undefined;
  readonly #channels: Map<string, NotificationHandler>;
  #firstReady: Promise<void>;
  #resolveFirstReady!: () => void;
  readonly #options: ListenerOptions;

  constructor(options: ListenerOptions) {
    this.#options = options;
    this.#channels = new Map(Object.entries(options.channels));
    this.#firstReady = new Promise((resolve) => (this.#resolveFirstReady = resolve));
  }

  /** Starts listening; resolves after the first LISTEN (it keeps trying until then, or until `stop()`). */
  start(): Promise<void> {
    this.#loop ??= this.#run();
    return Promise.race([this.#firstReady, this.#loop]);
  }

  /**
   * Listens on `channel` too, from now on: on the live connection at once (resolves after its LISTEN),
   * and on every later one. A channel already listened on gets the new handler.
   */
  async listen(channel: string, handler: NotificationHandler): Promise<void> {
    const fresh = !this.#channels.has(channel);
    this.#channels.set(channel, handler);
    const client = this.#client;
    // A failure means the connection is lost: the next one LISTENs on every channel of the map.
    if (fresh && client) await client.query(`listen ${pg.escapeIdentifier(channel)}`).catch(() => {});
  }

  /** Whether the listening connection is up (LISTEN done, not known lost). */
  get connected(): boolean {
    return this.#client !== undefined;
  }

  /** Listening connections lost since start (each replaced, or being replaced): a metric. */
  get reconnects(): number {
    return this.#reconnects;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wakeSleeper?.();
    this.#interrupt?.();
    await this.#loop;
  }

  async #run(): Promise<void> {
    const o = this.#options;
    let failures = 0;
    while (!this.#stopped) {
      const client = new pg.Client(clientConfig({ ...o, role: o.role ?? 'listen' }));
      const lost = new Promise<string>((resolve) => {
        client.on('error', (error) => resolve(`error: ${error.message}`));
        client.on('end', () => resolve('connection ended'));
        this.#interrupt = () => resolve('stopped');
      });
      let heartbeat: NodeJS.Timeout | undefined;
      try {
        await Promise.race([client.connect(), lost.then((why) => Promise.reject(new Error(why)))]);
        client.on('notification', (n) => this.#channels.get(n.channel)?.(n.payload ?? ''));
        // The live iterator: a channel added by `listen` meanwhile (no client yet) is listened on here.
        for (const channel of this.#channels.keys()) await client.query(`listen ${pg.escapeIdentifier(channel)}`);
        if (this.#stopped) break;
        this.#client = client;
        failures = 0;
        this.#resolveFirstReady();
        o.onReady();
        const silent = new Promise<string>((resolve) => {
          let asking = false;
          heartbeat = setInterval(() => {
            // One heartbeat at a time: a second query queued behind an unanswered one tells nothing more
            // (and node-postgres deprecates queueing queries on a client).
            if (asking) return;
            asking = true;
            const timeout = setTimeout(() => resolve('heartbeat unanswered'), o.heartbeatTimeoutMs ?? 2_000);
            const answered = () => {
              clearTimeout(timeout);
              asking = false;
            };
            client.query('select 1').then(answered, answered);
          }, o.heartbeatMs ?? 5_000);
        });
        const why = await Promise.race([lost, silent]);
        if (this.#stopped) break;
        this.#reconnects += 1;
        o.log.warn({ role: o.role ?? 'listen', why }, 'PostgreSQL listening connection lost: reconnecting');
      } catch (error) {
        if (this.#stopped) break;
        o.log.warn(
          { role: o.role ?? 'listen', err: (error as Error).message, attempt: failures + 1 },
          'PostgreSQL listening connection failed',
        );
      } finally {
        clearInterval(heartbeat);
        this.#client = undefined;
        client.removeAllListeners('notification');
        client.end().catch(() => {});
      }
      if (this.#stopped) break;
      const ceiling = Math.min(o.maxBackoffMs ?? 10_000, (o.firstBackoffMs ?? 100) * 2 ** failures);
      failures += 1;
      await this.#sleep(ceiling / 2 + Math.random() * (ceiling / 2));
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#wakeSleeper = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

/** Rings the doorbell: one NOTIFY on its own (autocommit), after the commit it announces. */
export async function notifyCommitted(
  client: { query(text: string, values: unknown[]): Promise<unknown> },
  payload = '',
  channel = HUB_CHANNEL,
): Promise<void> {
  await client.query('select pg_notify($1, $2)', [channel, payload]);
}
