/**
 * The management endpoints that give the web console in one call what the interfaces do not
 * (documented in docs/api.md); registered on the management router.
 */
import type Router from '@koa/router';
import { serializeConfiguration } from '../../config/xmlFile.js';
import type { HubServices, HubState } from '../context.js';
import type { HubProcess } from '../../hub/processRegistry.js';
import type { LiveConnection } from '../signalr/registry.js';
import type { HubProcessRecord, SignalRConnectionRecord } from './records.js';

/** The SignalR connections of the serving process, read when asked. */
export type LiveConnections = () => LiveConnection[];

interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
}

export function registerConsoleEndpoints(
  router: Router<HubState>,
  services: HubServices,
  liveConnections: LiveConnections,
): void {
  const { overview, metrics, management, processes } = services;

  router.get('/overview', async (ctx) => {
    ctx.body = { Sentinels: await overview.sentinels() };
  });
  router.get('/descriptors', async (ctx) => {
    ctx.body = await overview.descriptors();
  });
  // The configuration in force, written as the hub writes the file: the console diffs an edit against it.
  router.get('/configuration/applied', (ctx) => {
    ctx.type = 'application/xml; charset=utf-8';
    ctx.body = serializeConfiguration(services.configuration.current);
  });
  // One answer, one process: the cards' figures of the answering process are its row's, read together.
  router.get('/server/status', async (ctx) => {
    const [list, values] = await Promise.all([processes.list(), metricValues()]);
    const self = list.find((p) => p.self) as HubProcess;
    const sum = (name: string, where: (v: MetricValue) => boolean = () => true) =>
      (values.get(name) ?? []).filter(where).reduce((total, v) => total + v.value, 0);
    const now = Date.now();
    ctx.body = {
      Version: self.version,
      StartedAt: iso(self.startedMs),
      UptimeSeconds: Math.floor((now - self.startedMs) / 1000),
      Now: iso(now),
      WaitingLongPolls: self.waitingPolls,
      RequestsTotal: self.requests,
      AuthFailures: self.authFailures,
      DroppedMessages: sum('hub_dropped_messages_total'),
      StateObjects: sum('hub_state_objects'),
      QueuedMessages: sum('hub_queued_messages'),
      MessageSubscriptions: sum('hub_subscriptions', (v) => v.labels.kind === 'messages'),
      StateObjectSubscriptions: sum('hub_subscriptions', (v) => v.labels.kind === 'state_objects'),
      License: await management.license.record(),
      Processes: list.map(processRecord),
      Connections: liveConnections().map(connectionRecord),
    };
  });
  router.get('/server/processes', async (ctx) => {
    ctx.body = { Processes: (await processes.list()).map(processRecord) };
  });

  /** The metrics the console shows beside the process list; collected together, the database's share one read. */
  async function metricValues(): Promise<Map<string, MetricValue[]>> {
    const read = await Promise.all(SHOWN_METRICS.map(async (name) => metrics.registry.getSingleMetric(name)?.get()));
    return new Map(SHOWN_METRICS.map((name, i) => [name, (read[i]?.values ?? []) as MetricValue[]]));
  }
}

const SHOWN_METRICS = ['hub_dropped_messages_total', 'hub_state_objects', 'hub_queued_messages', 'hub_subscriptions'];

const iso = (ms: number) => new Date(ms).toISOString();

/** Who holds the connection by name only: the credential's name, never its key. */
const connectionRecord = (c: LiveConnection): SignalRConnectionRecord => ({
  Id: c.id,
  Who: c.who,
  Credential: c.credential,
  Hubs: c.hubs,
  Transport: c.transport ?? null,
  Since: c.since,
});

const processRecord = (p: HubProcess): HubProcessRecord => ({
  Id: p.id,
  Host: p.host,
  Pid: p.pid,
  Addresses: p.addresses,
  Version: p.version,
  StartedAt: iso(p.startedMs),
  LastHeartbeat: iso(p.heartbeatMs),
  Alive: p.alive,
  WaitingLongPolls: p.waitingPolls,
  RequestsTotal: p.requests,
  AuthFailures: p.authFailures,
  Self: p.self,
});
