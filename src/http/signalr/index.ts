/** The SignalR door onto the hub: its endpoints with Constellation's three hubs. */
import type { HubServices } from '../context.js';
import { constellationMethods, packageConnected, watchSettings } from './constellationHub.js';
import { subscriberMethods } from './consumerHub.js';
import type { SignalR } from './endpoints.js';
import { createSignalR } from './endpoints.js';
import { hubTable } from './hubs.js';

export type { SignalR };

export function signalr(services: HubServices): SignalR {
  const table = hubTable({
    ConsumerHub: subscriberMethods('ConsumerHub'),
    ConstellationHub: constellationMethods(),
    ControlHub: {},
  });
  return createSignalR(services, table, {
    // PackageHost says IsReconnection when it starts again after losing its connection.
    connected: (connection, reconnection, lookup) =>
      packageConnected(connection, reconnection || lookup('IsReconnection')?.toLowerCase() === 'true', services),
    watch: (connections) => watchSettings(services, () => connections.all()),
  });
}
