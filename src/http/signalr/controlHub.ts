/**
 * ControlHub: what Constellation's control pages and ControlManager call (research/signalr.md §3.3),
 * for credentials with the control-hub right, on the management interface's services. The hub runs no
 * sentinels: a sentinel or package counts as connected while a package of it has a hub connection to
 * this process, and start/stop/restart/reload reach a package as PackageControlAction (constellationHub.ts).
 */
import { hubError } from '../../errors.js';
import type { Caller } from '../../hub/access/caller.js';
import { SETTINGS_UPDATED_KEY } from '../../hub/configuration/configurationFileActions.js';
import type { HubServices } from '../context.js';
import type { HubConnection } from './connection.js';
import { settingsOfInstance } from './constellationHub.js';
import { CONTROL_ACTION_KEY } from './feed.js';
import type { HubMethods } from './hubs.js';
import { ArgumentProblem, filterArg, method, nameArg } from './hubs.js';

export const CONTROL_GROUPS = ['Sentinels', 'PackagesState', 'PackagesUsage', 'PackagesLog'] as const;

/** PackageHost's PackageControlAction values. */
const ACTIONS = { Start: 0, Stop: 1, Restart: 2, Reload: 3 } as const;

/** Log entries read per wake-up of a PackagesLog member. */
const LOG_PAGE = 100;

/** How long one wait for log entries lasts before it starts again. */
const LOG_WAIT_MS = 60_000;

function controlGroup(value: unknown): (typeof CONTROL_GROUPS)[number] {
  const found = CONTROL_GROUPS.find((g) => typeof value === 'string' && g.toLowerCase() === value.toLowerCase());
  if (!found) throw new ArgumentProblem(`The control group must be one of ${CONTROL_GROUPS.join(', ')}.`);
  return found;
}

/** Follows the package logs for a PackagesLog member: each new entry as one ReceiveLog call. */
function followLogs(connection: HubConnection, services: HubServices): () => void {
  const abort = new AbortController();
  void (async () => {
    const newest = await services.packageLogs.read({ limit: 1 });
    let afterId = newest.reduce((max, e) => Math.max(max, e.Id), 0);
    while (!abort.signal.aborted) {
      const entries = await services.packageLogs.follow({ afterId, limit: LOG_PAGE }, LOG_WAIT_MS, abort.signal);
      if (entries.length === 0) continue;
      afterId = entries.reduce((max, e) => Math.max(max, e.Id), afterId);
      connection.enqueue(
        entries.map((e) =>
          connection.invocation('ControlHub', 'ReceiveLog', [
            {
              Date: e.Date,
              SentinelName: e.SentinelName,
              PackageName: e.PackageName,
              Message: e.Message,
              Level: e.Level,
            },
          ]),
        ),
      );
    }
  })().catch((error: unknown) => {
    if (!abort.signal.aborted) services.logger.warn({ err: error }, 'SignalR: following the logs stopped');
  });
  return () => abort.abort();
}

/** What the control pages read of a package instance. */
const packageState = (sentinel: string, name: string, connected: ReadonlySet<string>) => ({
  Package: { Name: name },
  SentinelName: sentinel,
  IsConnected: connected.has(`${sentinel}/${name}`),
  State: connected.has(`${sentinel}/${name}`) ? 'Started' : 'Stopped',
});

/** `connected`: the friendly names of the packages with a hub connection to this process now. */
export function controlMethods(connected: () => ReadonlySet<string>): HubMethods {
  const sentinelsList = (services: HubServices) => {
    const now = connected();
    return services.configuration.current.sentinels.map((s) => ({
      Description: { SentinelName: s.name },
      IsConnected: s.packages.some((p) => now.has(`${s.name}/${p.name}`)),
    }));
  };
  const packagesList = (services: HubServices, sentinel: string) => {
    const found = services.configuration.sentinel(sentinel);
    if (!found) throw hubError('SentinelNotFound', { sentinel });
    const now = connected();
    return { SentinelName: sentinel, List: found.packages.map((p) => packageState(sentinel, p.name, now)) };
  };
  /** The instance as the caller of a purge, with its own credential. */
  const asInstance = (services: HubServices, sentinel: string, name: string): Caller => {
    const ref = services.configuration.instance(sentinel, name);
    const credential = ref && services.configuration.instanceCredential(ref);
    if (!ref || !credential) throw hubError('PackageInstanceNotFound', { sentinel, instance: name });
    return {
      interfaceName: 'platform',
      sentinelName: sentinel,
      packageName: name,
      friendlyName: `${sentinel}/${name}`,
      credential,
    };
  };
  const control = (action: keyof typeof ACTIONS) =>
    method(2, 2, async (c, [sentinel, name], services) => {
      const s = nameArg(sentinel, 'sentinel name');
      const p = nameArg(name, 'package name');
      asInstance(services, s, p);
      await services.messages.sendFromHub(c.caller, `${s}/${p}`, CONTROL_ACTION_KEY, ACTIONS[action]);
    });
  return {
    AddToControlGroup: method(1, 1, async (c, [group], services) => {
      const name = controlGroup(group);
      if (name === 'PackagesLog' && !c.controlGroups.has(name)) c.onEnd(followLogs(c, services), name);
      c.controlGroups.add(name);
    }),
    RemoveToControlGroup: method(1, 1, async (c, [group]) => {
      const name = controlGroup(group);
      c.controlGroups.delete(name);
      c.stopOnEnd(name);
    }),
    RequestSentinelsList: method(0, 0, async (c, _args, services) => {
      c.enqueue([c.invocation('ControlHub', 'UpdateSentinelsList', [sentinelsList(services)])]);
    }),
    RequestSentinelUpdates: method(0, 0, async (c, _args, services) => {
      c.enqueue(sentinelsList(services).map((s) => c.invocation('ControlHub', 'UpdateSentinel', [s])));
    }),
    RequestPackagesList: method(1, 1, async (c, [sentinel], services) => {
      c.enqueue([
        c.invocation('ControlHub', 'UpdatePackageList', [packagesList(services, nameArg(sentinel, 'sentinel name'))]),
      ]);
    }),
    RequestPackageDescriptor: method(1, 1, async (c, [name], services) => {
      const packageName = nameArg(name, 'package name');
      const found = (await services.descriptors.all()).find((d) => d.PackageName === packageName);
      c.enqueue([
        c.invocation('ControlHub', 'UpdatePackageDescriptor', [
          { PackageName: packageName, Descriptor: found?.Descriptor ?? null },
        ]),
      ]);
    }),
    PurgeStateObjects: method(4, 4, async (_c, [sentinel, name, soName, type], services) => {
      const producer = asInstance(services, nameArg(sentinel, 'sentinel name'), nameArg(name, 'package name'));
      return services.stateObjects.purge(producer, filterArg(soName, 'name'), filterArg(type, 'type'));
    }),
    ReloadServerConfiguration: method(0, 1, async (c, [deploy], services) => {
      const reloaded = await services.management.configurationFile.reload(deploy === true, c.caller, {
        by: c.caller.credential.name,
        reason: 'ControlHub ReloadServerConfiguration',
      });
      return reloaded.changed;
    }),
    Start: control('Start'),
    Stop: control('Stop'),
    Restart: control('Restart'),
    Reload: control('Reload'),
    UpdatePackageSettings: method(2, 2, async (c, [sentinel, name], services) => {
      const s = nameArg(sentinel, 'sentinel name');
      const p = nameArg(name, 'package name');
      const settings = settingsOfInstance(services, s, p);
      if (!settings) throw hubError('PackageInstanceNotFound', { sentinel: s, instance: p });
      await services.messages.sendFromHub(c.caller, `${s}/${p}`, SETTINGS_UPDATED_KEY, settings);
    }),
  };
}
