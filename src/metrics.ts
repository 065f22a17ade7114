/** Prometheus metrics of one hub (its own registry, so several hubs can live in one process). */
import type { Metric } from 'prom-client';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

const LAG_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export interface MetricSources {
  waitingPolls: () => number;
  /** Counts read from the database at scrape time. */
  counts: () => Promise<{ subscriptions: { kind: string; n: number }[]; queuedMessages: number; stateObjects: number }>;
}

export class HubMetrics {
  readonly registry = new Registry();
  /** hub_http_requests_total and hub_http_request_duration_seconds (RequestMetrics). */
  readonly requests = new RequestMetrics(this.registry);
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

const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5, 30, 120];

/** One route and status of the request metrics: counts and times a request in a few additions. */
export interface RequestRecorder {
  record(seconds: number): void;
}

/** The counts of one (interface, action, status), and the durations' histogram of each. */
interface RouteStatus {
  labels: { interface: string; action: string; status: string };
  requests: number;
  /** Requests per bucket of DURATION_BUCKETS (not cumulative); the last: above every bound. */
  buckets: number[];
  sum: number;
}

/** What a registry reads of a metric: its exposition, built by `values`. */
interface Exposed {
  name: string;
  help: string;
  type: string;
  aggregator: 'sum';
  values: { value: number; labels: Record<string, string | number>; metricName?: string }[];
}

/**
 * hub_http_requests_total{interface,action,status} and hub_http_request_duration_seconds{interface,
 * action}, kept as plain numbers per (interface, action, status) and turned into prom-client's
 * exposition when scraped. prom-client's labelled children validate and hash their labels on every
 * call, and a fan-out answers hundreds of polls in one turn of the event loop, each counted and timed
 * before the next is written (issue 22, P3); a recorder here is resolved once per route and status.
 */
class RequestMetrics {
  /** By `interface action status`: routes of the same labels (a path's spellings) share theirs. */
  readonly #rows = new Map<string, RouteStatus>();

  constructor(registry: Registry) {
    const metric = (name: string, help: string, type: string, values: () => Exposed['values']) =>
      registry.registerMetric({
        name,
        help,
        type,
        aggregator: 'sum',
        get: () => Promise.resolve<Exposed>({ name, help, type, aggregator: 'sum', values: values() }),
        reset: () => this.#reset(),
      } as unknown as Metric);
    metric('hub_http_requests_total', 'HTTP requests by interface, action and status', 'counter', () =>
      [...this.#rows.values()].map((row) => ({ value: row.requests, labels: { ...row.labels } })),
    );
    metric(
      'hub_http_request_duration_seconds',
      'HTTP request duration (long-polls included) by interface and action',
      'histogram',
      () => this.#durations(),
    );
  }

  /** The recorder of one route's requests answered with `status`. */
  recorder(iface: string, action: string, status: number): RequestRecorder {
    const key = `${iface} ${action} ${status}`;
    let row = this.#rows.get(key);
    if (!row) {
      row = {
        labels: { interface: iface, action, status: String(status) },
        requests: 0,
        buckets: new Array<number>(DURATION_BUCKETS.length + 1).fill(0),
        sum: 0,
      };
      this.#rows.set(key, row);
    }
    const counted = row;
    return {
      record(seconds) {
        counted.requests++;
        counted.sum += seconds;
        let at = 0;
        while (at < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[at]) at++;
        counted.buckets[at]++;
      },
    };
  }

  /** The histogram's series, by interface and action (the statuses of one summed), as prom-client's. */
  #durations(): Exposed['values'] {
    const byRoute = new Map<string, { iface: string; action: string; buckets: number[]; sum: number }>();
    for (const row of this.#rows.values()) {
      const key = `${row.labels.interface} ${row.labels.action}`;
      let route = byRoute.get(key);
      if (!route) {
        route = { iface: row.labels.interface, action: row.labels.action, buckets: row.buckets.map(() => 0), sum: 0 };
        byRoute.set(key, route);
      }
      row.buckets.forEach((n, i) => (route.buckets[i] += n));
      route.sum += row.sum;
    }
    const values: Exposed['values'] = [];
    const name = 'hub_http_request_duration_seconds';
    for (const { iface, action, buckets, sum } of byRoute.values()) {
      const labels = { interface: iface, action };
      let count = 0;
      DURATION_BUCKETS.forEach((le, i) => {
        count += buckets[i];
        values.push({ value: count, labels: { ...labels, le }, metricName: `${name}_bucket` });
      });
      count += buckets[DURATION_BUCKETS.length];
      values.push({ value: count, labels: { ...labels, le: '+Inf' }, metricName: `${name}_bucket` });
      values.push({ value: sum, labels: { ...labels }, metricName: `${name}_sum` });
      values.push({ value: count, labels: { ...labels }, metricName: `${name}_count` });
    }
    return values;
  }

  #reset(): void {
    for (const row of this.#rows.values()) {
      row.requests = 0;
      row.buckets.fill(0);
      row.sum = 0;
    }
  }
}
