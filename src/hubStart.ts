/**
 * What a hub's start reads before createHub.ts composes its services: the configuration it starts with
 * when the store keeps it, and the addresses it serves.
 */
import type { Logger } from 'pino';
import { ConfigurationError } from './config/validate.js';
import type { SharedStartingConfiguration } from './hub/configuration/configurationSharedStart.js';
import { sharedStartingConfiguration } from './hub/configuration/configurationSharedStart.js';
import { checkServable } from './http/server.js';
import type { ListenAddress } from './listen.js';
import { listenAddresses } from './listen.js';
import type { SharedConfigurationDocument } from './hub/ports/configuration.js';
import type { HubOptions } from './settings.js';

/** The addresses this hub serves; throws ConfigurationError for a listen URI it cannot serve. */
export function listenPlan(options: HubOptions, listenUris: string[]): ListenAddress[] {
  let addresses: ListenAddress[];
  try {
    addresses = listenAddresses(listenUris, { host: options.host, port: options.port });
  } catch (error) {
    throw new ConfigurationError(`<listenUris>: ${(error as Error).message}`);
  }
  addresses.forEach((address) => checkServable(options, address));
  return addresses;
}

/** The configuration a hub whose store keeps it starts with: the store's, imported from the file by the first start. */
export async function sharedStart(
  options: HubOptions,
  logger: Logger,
  shared: SharedConfigurationDocument | undefined,
  keep: (generatedKey: string) => void,
): Promise<SharedStartingConfiguration> {
  if (!shared) throw new Error('this store keeps no configuration document');
  return sharedStartingConfiguration(shared.documents, options.configPath, options.adminKey, logger, keep);
}

export function warnIgnored(logger: Logger, where: string, ignored: string[]): void {
  if (ignored.length) logger.warn({ ignored }, `${where}: not used by this hub (ignored): ${ignored.join('; ')}`);
}
