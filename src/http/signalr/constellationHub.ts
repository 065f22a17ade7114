/**
 * ConstellationHub: what .NET packages (PackageHost, and Python packages through it) call, each the
 * virtual package interface's action of the same name, as the package instance the connection
 * authenticated as (research/signalr.md §3.4). Settings and control actions reach a package as the
 * messages the hub sends packages anyway (`__SettingsUpdated`, `__PackageControlAction`), turned into
 * the `UpdateSettings` and `PackageControlAction` callbacks for a hub connection (feed.ts).
 */
import { packageDescriptor } from '../../hub/packages/descriptorSchema.js';
import type { LogLevel } from '../../hub/ports/packageLogs.js';
import { parseLogLevel } from '../../hub/packages/packageLogs.js';
import { parseBody, pushStateObjectBody } from '../bodies.js';
import type { HubServices } from '../context.js';
import type { HubConnection } from './connection.js';
import type { HubMethods } from './hubs.js';
import { ArgumentProblem, filterArg, method } from './hubs.js';
import { subscriberMethods } from './consumerHub.js';

/** PackageHost's LogLevel: Debug 0, Info 1, Warn 2, Error 3, Fatal 4 (Debug is never sent). */
const LEVELS: LogLevel[] = ['Info', 'Info', 'Warn', 'Error', 'Error'];

function levelOf(value: unknown): LogLevel {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < LEVELS.length) return LEVELS[value];
  const named = typeof value === 'string' ? parseLogLevel(value) : undefined;
  if (named) return named;
  throw new ArgumentProblem('The log level must be 0 to 4 (Debug, Info, Warn, Error, Fatal) or its name.');
}

/** An instance's resolved settings, as GetSettings answers them (undefined: no such instance). */
export function settingsOfInstance(services: HubServices, sentinel: string, name: string) {
  const ref = services.configuration.instance(sentinel, name);
  return ref ? services.configuration.resolveSettings(ref) : undefined;
}

/** The connection's instance's resolved settings. */
export const settingsOf = (services: HubServices, connection: HubConnection): Record<string, string> =>
  settingsOfInstance(services, connection.caller.sentinelName, connection.caller.packageName) ?? {};

export function constellationMethods(): HubMethods {
  return {
    ...subscriberMethods('ConstellationHub'),
    RequestSettings: method(0, 0, async (c, _args, services) => {
      const settings = settingsOf(services, c);
      c.feed.settingsSent = JSON.stringify(settings);
      c.enqueue([c.invocation('ConstellationHub', 'UpdateSettings', [settings])]);
    }),
    WriteLog: method(2, 2, async (c, [message, level], services) => {
      if (typeof message !== 'string' || message === '')
        throw new ArgumentProblem('The log message must be a non-empty string.');
      await services.packageLogs.write(c.caller, levelOf(level), message);
    }),
    PushStateObject: method(5, 5, async (c, [name, value, type, metadatas, lifetime], services) => {
      const body = parseBody(pushStateObjectBody, {
        Name: name,
        Value: value,
        Type: type,
        Metadatas: metadatas ?? undefined,
        Lifetime: lifetime,
      });
      await services.stateObjects.push(c.caller, {
        name: body.Name,
        value: body.Value,
        type: body.Type || undefined,
        lifetime: body.Lifetime ?? 0,
        metadatas: body.Metadatas ?? {},
      });
    }),
    PurgeStateObjects: method(2, 2, async (c, [name, type], services) => {
      await services.stateObjects.purge(c.caller, filterArg(name, 'name'), filterArg(type, 'type'));
    }),
    DeclarePackageDescriptor: method(1, 1, async (c, [descriptor], services) => {
      await services.descriptors.declare(c.caller, parseBody(packageDescriptor, descriptor));
    }),
  };
}

/** A package connecting (not reconnecting) gets its own StateObjects, as PackageHost asks for them. */
export async function packageConnected(connection: HubConnection, reconnection: boolean, services: HubServices) {
  if (reconnection || !connection.hubs.has('ConstellationHub')) return;
  const { sentinelName, packageName } = connection.caller;
  const own = await services.stateObjects.request(connection.caller, {
    sentinel: sentinelName,
    package: packageName,
    name: '*',
    type: '*',
  });
  connection.enqueue([connection.invocation('ConstellationHub', 'ReceiveLastStateObjects', [own])]);
}

/** How often the configuration is looked at for changed settings (a reference comparison). */
const SETTINGS_CHECK_MS = 1000;

/**
 * Packages that asked for their settings get UpdateSettings again whenever they change: by the
 * management interface, a reload, another process (PostgreSQL). Returns the stop function.
 */
export function watchSettings(services: HubServices, connections: () => Iterable<HubConnection>): () => void {
  let seen = services.configuration.current;
  const timer = setInterval(() => {
    if (services.configuration.current === seen) return;
    seen = services.configuration.current;
    for (const connection of connections()) {
      if (connection.feed.settingsSent === undefined) continue;
      const settings = settingsOf(services, connection);
      const text = JSON.stringify(settings);
      if (text === connection.feed.settingsSent) continue;
      connection.feed.settingsSent = text;
      connection.enqueue([connection.invocation('ConstellationHub', 'UpdateSettings', [settings])]);
    }
  }, SETTINGS_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
