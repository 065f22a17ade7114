/**
 * The domain services of one hub over its store, and the timers they need (not started yet): the part
 * of the composition root (createHub.ts) that builds, which then starts them and serves them over HTTP.
 */
import path from 'node:path';
import type { Logger } from 'pino';
import type { StartingConfiguration } from './config/configFile.js';
import { AuthFailureThrottle } from './hub/access/authFailureThrottle.js';
import { CallerDirectory } from './hub/access/caller.js';
import type { Configuration } from './hub/configuration/configuration.js';
import { ConfigurationFileActions } from './hub/configuration/configurationFileActions.js';
import { FileConfiguration } from './hub/configuration/configurationOnFile.js';
import { SharedConfiguration } from './hub/configuration/configurationShared.js';
import type { SharedStartingConfiguration } from './hub/configuration/configurationSharedStart.js';
import { Credentials } from './hub/configuration/credentials.js';
import { Deliveries } from './hub/polls/deliveries.js';
import { Descriptors } from './hub/packages/descriptors.js';
import { ExpiryTimer } from './hub/polls/expiry.js';
import { HubLicense } from './hub/configuration/license.js';
import { Messages } from './hub/messages.js';
import { Overview } from './hub/overview.js';
import { PackageInstances } from './hub/packages/packageInstances.js';
import { PackageLogs } from './hub/packages/packageLogs.js';
import { PollGate } from './hub/polls/pollGate.js';
import type { OpenedStore } from './hub/ports/hubStore.js';
import type { HubProcessFigures } from './hub/ports/processes.js';
import { ProcessRegistry } from './hub/processRegistry.js';
import { Repository } from './hub/packages/repository.js';
import { Sentinels } from './hub/configuration/sentinels.js';
import { StateObjects } from './hub/stateObjects.js';
import { Subscriptions } from './hub/polls/subscriptions.js';
import { Sweeper } from './hub/polls/sweeper.js';
import type { WakeUps } from './hub/polls/wakeUps.js';
import type { HubServices } from './http/context.js';
import { checkServable } from './http/server.js';
import type { HubMetrics } from './metrics.js';
import type { HubOptions } from './settings.js';
import { HUB_VERSION } from './version.js';

/** This process's own counts for its row of the process list: what its Prometheus metrics say. */
async function processFigures(metrics: HubMetrics, notifier: WakeUps): Promise<HubProcessFigures> {
  const total = async (name: string) =>
    ((await metrics.registry.getSingleMetric(name)?.get())?.values ?? []).reduce((sum, v) => sum + v.value, 0);
  return {
    waitingPolls: notifier.waitingCount,
    requests: await total('hub_http_requests_total'),
    authFailures: await total('hub_auth_failures_total'),
  };
}

/** The domain services over `store`, and the timers they need (not started yet). */
export async function createServices(
  options: HubOptions,
  logger: Logger,
  loaded: StartingConfiguration | SharedStartingConfiguration,
  { store, settling, sharedConfiguration, otherProcesses }: OpenedStore,
  notifier: WakeUps,
  metrics: HubMetrics,
) {
  const { file, text: configText, generatedAdminKey } = loaded;
  const configuration: Configuration =
    'document' in loaded && sharedConfiguration
      ? new SharedConfiguration(sharedConfiguration.documents, file.config, loaded.document, logger)
      : new FileConfiguration(store.configuration, options.configPath, file.config, configText);
  await configuration.recordStart({
    by: generatedAdminKey === undefined ? '(file)' : '(first start)',
    reason: 'start',
  });

  const gate = new PollGate(options.maxPollsPerCredential);
  const callers = new CallerDirectory(store.callers);
  const deliveries = new Deliveries(store.subscriptions, settling, (error) =>
    logger.warn({ err: error }, 'settling a delivery failed: it is read again, or read on, later'),
  );
  const subscriptions = new Subscriptions(
    store.subscriptions,
    callers,
    notifier,
    gate,
    deliveries,
    otherProcesses?.polls,
  );
  const expiry = new ExpiryTimer(store.stateObjects, notifier, (error) =>
    logger.error({ err: error }, 'expiry failed'),
  );
  const counters = { missedMessages: 0 };
  const messages = new Messages(store.messages, store.subscriptions, notifier, subscriptions, callers, {
    missed: (subscription, caller, n) => {
      counters.missedMessages += n;
      metrics.droppedMessages.inc(n);
      logger.warn(
        {
          subscription,
          caller: caller.friendlyName,
          credential: caller.credential.name,
          missed: n,
          total: counters.missedMessages,
        },
        'message subscription fell behind the log retention: the oldest messages it had not read are gone',
      );
    },
  });
  const packageLogs = new PackageLogs(store.packageLogs, notifier, logger, options.logRetention);
  const repository = new Repository(
    store.repository,
    path.join(options.dataDir, 'tmp'),
    {
      maxEntries: 1000,
      maxUncompressedBytes: options.maxPackageUnpackedBytes,
      maxPackageBytes: options.maxPackageBytes,
      downloadTimeoutMs: options.downloadTimeoutMs,
      maxRedirects: 5,
    },
    logger,
  );
  await repository.start();
  const descriptors = new Descriptors(store.descriptors);
  const license = new HubLicense(store.hubSettings);
  const sentinels = new Sentinels(configuration, license);
  const services: HubServices = {
    options,
    logger,
    configuration,
    stateObjects: new StateObjects(store.stateObjects, store.subscriptions, notifier, subscriptions, expiry),
    messages,
    subscriptions,
    packageLogs,
    descriptors,
    management: {
      configurationFile: new ConfigurationFileActions(configuration, messages, (address) =>
        checkServable(options, address),
      ),
      sentinels,
      instances: new PackageInstances(configuration, sentinels, license, repository),
      credentials: new Credentials(configuration),
      license,
    },
    repository,
    version: HUB_VERSION,
    metrics,
    authFailures: new AuthFailureThrottle(
      {
        // Constellation's appSettings DelayAfterAuthentificationError, when the file has it, sets the base delay.
        baseMs: file.appSettings.delayAfterAuthenticationErrorMs ?? options.authFailureDelayMs,
        stepMs: options.authFailureStepMs,
        maxMs: options.authFailureMaxDelayMs,
        limit: options.authFailureLimit,
      },
      otherProcesses?.authFailures,
      (error) => logger.warn({ err: error }, 'failed authentication not counted in the database'),
    ),
    overview: new Overview(store.activity, descriptors, configuration),
    processes: new ProcessRegistry(store.processes, () => processFigures(metrics, notifier), HUB_VERSION, logger, {
      heartbeatMs: options.processHeartbeatMs,
      forgetMs: options.processForgetMs,
    }),
  };
  const sweeper = new Sweeper(
    store.subscriptions,
    store.stateObjects,
    store.messages,
    notifier,
    packageLogs,
    logger,
    options.subscriptionIdleMs,
    options.sweepIntervalMs,
    options.messageRetentionMs,
    otherProcesses,
  );
  return { services, expiry, sweeper, processes: services.processes, deliveries };
}
