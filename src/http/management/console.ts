/**
 * The management endpoints that give the web console in one call what the interfaces do not
 * (documented in docs/api.md); registered on the management router.
 */
import type Router from '@koa/router';
import { serializeConfiguration } from '../../config/xmlFile.js';
import type { HubServices, HubState } from '../context.js';
import type { HubProcessRecord } from './records.js';

interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
}

export function registerConsoleEndpoints(router: Router<HubState>, services: HubServices): void {
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
  router.get('/server/status', async (ctx) => {
    const values = new Map<string, MetricValue[]>();
    for (const metric of await metrics.registry.getMetricsAsJSON())
      values.set(metric.name, metric.values as MetricValue[]);
    const sum = (name: string, where: (v: MetricValue) => boolean = () => true) =>
      (values.get(name) ?? []).filter(where).reduce((total, v) => total + v.value, 0);
    const now = Date.now();
    ctx.body = {
      Version: services.version,
      StartedAt: new Date(overview.startedAt).toISOString(),
      UptimeSeconds: Math.floor((now - overview.startedAt) / 1000),
      Now: new Date(now).toISOString(),
      WaitingLongPolls: sum('hub_waiting_long_polls'),
      RequestsTotal: sum('hub_http_requests_total'),
      AuthFailures: sum('hub_auth_failures_total'),
      StateObjects: sum('hub_state_objects'),
      QueuedMessages: sum('hub_queued_messages'),
      DroppedMessages: sum('hub_dropped_messages_total'),
      MessageSubscriptions: sum('hub_subscriptions', (v) => v.labels.kind === 'messages'),
      StateObjectSubscriptions: sum('hub_subscriptions', (v) => v.labels.kind === 'state_objects'),
      License: await management.license.record(),
    };
  });
  router.get('/server/processes', async (ctx) => {
    const iso = (ms: number) => new Date(ms).toISOString();
    ctx.body = {
      Processes: (await processes.list()).map((p): HubProcessRecord => ({
        Id: p.id,
        Host: p.host,
        Pid: p.pid,
        Version: p.version,
        StartedAt: iso(p.startedMs),
        LastHeartbeat: iso(p.heartbeatMs),
        Alive: p.alive,
        WaitingLongPolls: p.waitingPolls,
        Self: p.self,
      })),
    };
  });
}
