/** The SignalR door onto the hub: its endpoints with Constellation's three hubs. */
import type { HubServices } from '../context.js';
import { subscriberMethods } from './consumerHub.js';
import type { SignalR } from './endpoints.js';
import { createSignalR } from './endpoints.js';
import { hubTable } from './hubs.js';

export type { SignalR };

export function signalr(services: HubServices): SignalR {
  const table = hubTable({
    ConsumerHub: subscriberMethods('ConsumerHub'),
    ConstellationHub: subscriberMethods('ConstellationHub'),
    ControlHub: {},
  });
  return createSignalR(services, table, { connected: async () => undefined });
}
