/** Who is calling: the identity every interface authenticates, and the ConnectionId it is known by. */
import { randomUUID } from 'node:crypto';
import type { Credential } from '../../config/model.js';
import type { CallerStore } from '../ports/callers.js';

export type InterfaceName = 'consumer' | 'platform' | 'management';

/** Sender types on the wire (wire.md, `Sender.Type`): a consumer's message, a package's, over SignalR or REST. */
export const SenderType = { ConsumerHub: 0, ConstellationHub: 1, ConsumerHttp: 2, ConstellationHttp: 3 } as const;

export interface Caller {
  interfaceName: InterfaceName;
  sentinelName: string;
  packageName: string;
  /** `Consumer/<PackageName>` for consumers, `<Sentinel>/<Package>` for packages. */
  friendlyName: string;
  credential: Credential;
}

export const isPackageCaller = (caller: Caller) => caller.interfaceName === 'platform';

/** Gives each caller identity a GUID that stays the same across requests and restarts. */
export class CallerDirectory {
  private readonly ids = new Map<string, string>();
  private readonly recording = new Map<string, Promise<string>>();

  constructor(private readonly store: CallerStore) {}

  /** The caller's ConnectionId if it has been seen before; never records anything. */
  async knownConnectionId(caller: Caller): Promise<string | undefined> {
    const known = this.ids.get(caller.friendlyName);
    if (known) return known;
    const id = await this.store.connectionId(caller.friendlyName);
    if (id) this.ids.set(caller.friendlyName, id);
    return id;
  }

  /** The caller's ConnectionId, recorded on first sight. */
  connectionId(caller: Caller): Promise<string> {
    const known = this.ids.get(caller.friendlyName);
    if (known) return Promise.resolve(known);
    // A device's first requests may come many at once: they share one lookup instead of racing.
    let pending = this.recording.get(caller.friendlyName);
    if (!pending) {
      pending = this.record(caller).finally(() => this.recording.delete(caller.friendlyName));
      this.recording.set(caller.friendlyName, pending);
    }
    return pending;
  }

  private async record(caller: Caller): Promise<string> {
    const connectionId = await this.store.record({
      connectionId: randomUUID(),
      friendlyName: caller.friendlyName,
      kind: isPackageCaller(caller) ? 'package' : 'consumer',
      sentinelName: caller.sentinelName,
      packageName: caller.packageName,
      firstSeenMs: Date.now(),
    });
    this.ids.set(caller.friendlyName, connectionId);
    return connectionId;
  }
}
