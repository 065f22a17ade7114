/**
 * The SignalR connections this process serves now: found by id on every request, counted per
 * credential (the cap), listed (who, hub, transport, since) for the console and /metrics.
 */
import type { HubConnection } from './connection.js';
import type { HubName, TransportName } from './protocol.js';

/** One live connection as the console and /metrics show it. */
export interface LiveConnection {
  id: string;
  /** The caller's friendly name: `Consumer/<PackageName>`, `<Sentinel>/<Package>`. */
  who: string;
  credential: string;
  hubs: HubName[];
  transport: TransportName | undefined;
  since: string;
}

/** Ids of connections that ended here, kept a while so a late request is refused rather than revived. */
const ENDED_KEPT = 10_000;

export class ConnectionRegistry {
  private readonly byId = new Map<string, HubConnection>();
  private readonly ended = new Set<string>();

  get(id: string): HubConnection | undefined {
    return this.byId.get(id);
  }

  add(connection: HubConnection): void {
    this.byId.set(connection.ids.id, connection);
  }

  /** Ends and forgets the connection: a request naming it later is refused by this process. */
  remove(connection: HubConnection): void {
    connection.end();
    if (this.byId.get(connection.ids.id) === connection) this.byId.delete(connection.ids.id);
    this.ended.add(connection.ids.id);
    if (this.ended.size > ENDED_KEPT) this.ended.delete(this.ended.values().next().value as string);
  }

  hasEnded(id: string): boolean {
    return this.ended.has(id);
  }

  all(): Iterable<HubConnection> {
    return this.byId.values();
  }

  /** The friendly names of the package instances connected to ConstellationHub here. */
  connectedPackages(): Set<string> {
    const names = new Set<string>();
    for (const c of this.byId.values()) if (c.hubs.has('ConstellationHub')) names.add(c.caller.friendlyName);
    return names;
  }

  countFor(credential: string): number {
    let n = 0;
    for (const connection of this.byId.values()) if (connection.caller.credential.name === credential) n++;
    return n;
  }

  list(): LiveConnection[] {
    return [...this.byId.values()].map((c) => ({
      id: c.ids.id,
      who: c.caller.friendlyName,
      credential: c.caller.credential.name,
      hubs: [...c.hubs],
      transport: c.transport,
      since: new Date(c.since).toISOString(),
    }));
  }

  /** Connections by hub and transport (a connection carrying two hubs counts under each). */
  counts(): { hub: HubName; transport: TransportName | 'none'; n: number }[] {
    const counted = new Map<string, { hub: HubName; transport: TransportName | 'none'; n: number }>();
    for (const c of this.byId.values()) {
      for (const hub of c.hubs) {
        const transport = c.transport ?? 'none';
        const key = `${hub} ${transport}`;
        const entry = counted.get(key) ?? { hub, transport, n: 0 };
        entry.n++;
        counted.set(key, entry);
      }
    }
    return [...counted.values()];
  }

  endAll(): void {
    for (const connection of [...this.byId.values()]) this.remove(connection);
  }
}
