/** Prometheus metrics of one hub (its own registry, so several hubs can live in one process). */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

const LAG_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export interface MetricSources {
  waitingPolls: () => number;
  /** Counts read from the database at scrape time. */
  counts: () => Promise<{ subscriptions: { kind: string; n: number }[]; queuedMessages: number; stateObjects: number }>;
}

export class HubMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'hub_http_requests_total',
    help: 'HTTP requests by interface, action and status',
    labelNames: ['interface', 'action', 'status'] as const,
    registers: [this.registry],
  });
  readonly requestDuration = new Histogram({
    name: 'hub_http_request_duration_seconds',
    help: 'HTTP request duration (long-polls included) by interface and action',
    labelNames: ['interface', 'action'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5, 30, 120],
    registers: [this.registry],
  });
  readonly droppedMessages = new Counter({
    name: 'hub_dropped_messages_total',
    help: 'Message log entries a subscription had not read when they left the retention (HUB_MESSAGE_QUEUE_LIMIT, HUB_MESSAGE_RETENTION_SECONDS)',
    registers: [this.registry],
  });
  readonly commitDuration = new Histogram({
    name: 'hub_commit_duration_seconds',
    help: 'Duration of SQLite COMMIT statements',
    buckets: [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5],
    registers: [this.registry],
  });
  readonly batchSize = new Histogram({
    name: 'hub_batch_pieces',
    help: 'Writes (pushes, sends, polls …) carried by one group-commit transaction',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 1024, 4096],
    registers: [this.registry],
  });
  readonly notificationLag = new Histogram({
    name: 'hub_postgres_notification_lag_seconds',
    help: "PostgreSQL: from a process's NOTIFY after its commit to this process hearing it (its own included; clocks of different machines add their difference)",
    buckets: LAG_BUCKETS,
    registers: [this.registry],
  });
  readonly tailReadLag = new Histogram({
    name: 'hub_postgres_tail_read_lag_seconds',
    help: "PostgreSQL: from a process's NOTIFY after its commit to this process's tail reader having read what it announced (the wake-up's delay across processes)",
    buckets: LAG_BUCKETS,
    registers: [this.registry],
  });
  readonly authFailures = new Counter({
    name: 'hub_auth_failures_total',
    help: 'Refused authentications',
    registers: [this.registry],
  });

  constructor(sources: MetricSources) {
    new Gauge({
      name: 'hub_waiting_long_polls',
      help: 'Long-polls (GetMessages, GetStateObjects) waiting now',
      registers: [this.registry],
      collect() {
        this.set(sources.waitingPolls());
      },
    });
    // One database read per scrape, shared by the gauges that prom-client collects concurrently.
    let inflight: ReturnType<MetricSources['counts']> | undefined;
    const read = () =>
      (inflight ??= sources.counts().finally(() => {
        setImmediate(() => (inflight = undefined));
      }));
    new Gauge({
      name: 'hub_subscriptions',
      help: 'Subscriptions by kind',
      labelNames: ['kind'] as const,
      registers: [this.registry],
      async collect() {
        const { subscriptions } = await read();
        this.reset();
        for (const { kind, n } of subscriptions) this.set({ kind }, n);
      },
    });
    new Gauge({
      name: 'hub_queued_messages',
      help: 'Messages in the message log (all subscriptions read the one log; see HUB_MESSAGE_QUEUE_LIMIT)',
      registers: [this.registry],
      async collect() {
        this.set((await read()).queuedMessages);
      },
    });
    new Gauge({
      name: 'hub_state_objects',
      help: 'StateObjects stored',
      registers: [this.registry],
      async collect() {
        this.set((await read()).stateObjects);
      },
    });
  }
}
