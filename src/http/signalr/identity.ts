/**
 * Who a SignalR request is, checked on every request as the REST interfaces check theirs: pages put
 * `SentinelName`/`PackageName`/`AccessKey` in the query string (`qs`), .NET packages send them as
 * headers. `SentinelName=Consumer` is a consumer, `Controller` a control client (its credential needs
 * the control-hub right), anything else a package instance admitted as the platform interface admits it.
 */
import { hubError } from '../../errors.js';
import { authenticate } from '../../hub/access/authentication.js';
import type { Caller } from '../../hub/access/caller.js';
import type { HubServices } from '../context.js';
import type { HubName } from './protocol.js';

/** A request's parameters: the query string first, then the headers (names case-insensitive). */
export type Lookup = (name: string) => string | undefined;

/** The caller, or undefined when the three values do not authenticate. */
export function signalrCaller(services: HubServices, lookup: Lookup): Caller | undefined {
  const sentinelName = lookup('SentinelName');
  const packageName = lookup('PackageName');
  const accessKey = lookup('AccessKey');
  const { configuration } = services;
  if (sentinelName === 'Controller') {
    const as = authenticate(configuration, 'consumer', { sentinelName: 'Consumer', packageName, accessKey });
    return as && { ...as, sentinelName, friendlyName: `${sentinelName}/${as.packageName}` };
  }
  const interfaceName = sentinelName === 'Consumer' ? 'consumer' : 'platform';
  return authenticate(configuration, interfaceName, { sentinelName, packageName, accessKey });
}

const HUB_NAMES: Record<string, HubName> = {
  consumerhub: 'ConsumerHub',
  constellationhub: 'ConstellationHub',
  controlhub: 'ControlHub',
};

/** The hubs `connectionData` names (`[{"name":"consumerhub"}]` from pages, `[{"Name":…}]` from .NET). */
export function requestedHubs(connectionData: string | undefined): Set<HubName> {
  if (!connectionData) throw hubError('SignalRBadRequest', { problem: "'connectionData' names no hub" });
  let parsed: unknown;
  try {
    parsed = JSON.parse(connectionData);
  } catch {
    throw hubError('SignalRBadRequest', { problem: "'connectionData' is not JSON" });
  }
  if (!Array.isArray(parsed) || parsed.length === 0 || parsed.length > 3)
    throw hubError('SignalRBadRequest', { problem: "'connectionData' must list one to three hubs" });
  const hubs = new Set<HubName>();
  for (const entry of parsed) {
    const raw =
      (entry as { name?: unknown; Name?: unknown } | null)?.name ?? (entry as { Name?: unknown } | null)?.Name;
    if (typeof raw !== 'string')
      throw hubError('SignalRBadRequest', { problem: "a hub in 'connectionData' has no name" });
    const name = HUB_NAMES[raw.toLowerCase()];
    if (!name) throw hubError('SignalRUnknownHub', { hub: raw.slice(0, 64) });
    hubs.add(name);
  }
  return hubs;
}

/** Throws 403 unless `caller` may connect to every hub in `hubs`. */
export function checkHubRights(caller: Caller, hubs: ReadonlySet<HubName>): void {
  const isPackage = caller.interfaceName === 'platform';
  for (const hub of hubs) {
    if (hub === 'ConsumerHub' && isPackage)
      throw hubError('SignalRHubNotAllowed', { hub, reason: 'a package connects to ConstellationHub' });
    if (hub === 'ConstellationHub' && !isPackage)
      throw hubError('SignalRHubNotAllowed', { hub, reason: 'only a package instance connects to it' });
    if (hub === 'ControlHub' && !caller.credential.enableControlHub)
      throw hubError('SignalRHubNotAllowed', { hub, reason: 'the credential does not have the control-hub right' });
  }
}
