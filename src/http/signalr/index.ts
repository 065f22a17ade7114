/** The SignalR door onto the hub: its endpoints with Constellation's three hubs. */
import type { HubServices } from '../context.js';
import { constellationMethods, packageConnected, watchSettings } from './constellationHub.js';
import { subscriberMethods } from './consumerHub.js';
import type { SignalR } from './endpoints.js';
import { createSignalR } from './endpoints.js';
import { controlMethods } from './controlHub.js';
import { hubTable } from './hubs.js';
import { ConnectionRegistry } from './registry.js';

export type { SignalR };

export function signalr(services: HubServices): SignalR {
  const connections = new ConnectionRegistry();
  const table = hubTable({
    ConsumerHub: subscriberMethods('ConsumerHub'),
    ConstellationHub: constellationMethods(),
    ControlHub: controlMethods(() => connections.connectedPackages()),
  });
  return createSignalR(
    services,
    table,
    {
      // PackageHost says IsReconnection when it starts again after losing its connection.
      connected: (connection, reconnection, lookup) =>
        packageConnected(connection, reconnection || lookup('IsReconnection')?.toLowerCase() === 'true', services),
      watch: (registry) => watchSettings(services, () => registry.all()),
    },
    connections,
  );
}
