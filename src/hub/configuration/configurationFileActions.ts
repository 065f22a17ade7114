/**
 * The management actions on the configuration document as a whole (the file, or the database's in
 * PostgreSQL mode): read it, replace it (validated as a start would, not applied), and apply it
 * (reload), optionally sending each package instance whose settings changed `__SettingsUpdated`.
 */
import type { ConfigurationFile } from '../../config/model.js';
import { parseConfigurationFileOffLoop } from '../../config/offLoop.js';
import { ConfigurationError, managementAccessProblem } from '../../config/validate.js';
import { hubError } from '../../errors.js';
import type { ListenAddress } from '../../listen.js';
import { listenAddresses, parseListenUri } from '../../listen.js';
import type { Caller } from '../access/caller.js';
import type { ChangeOrigin, Configuration } from './configuration.js';
import { settingsByInstance } from './configuration.js';
import type { Messages } from '../messages.js';

export const SETTINGS_UPDATED_KEY = '__SettingsUpdated';

export class ConfigurationFileActions {
  constructor(
    private readonly configuration: Configuration,
    private readonly messages: Messages,
    /** Throws when this hub could not serve the address (an https URI without a certificate). */
    private readonly checkListen: (address: ListenAddress) => void = () => undefined,
  ) {}

  /** The document a reload would apply (the file's text as it is on disk; '' when there is none). */
  read(): Promise<string> {
    return this.configuration.readText();
  }

  /** Validates as a start would, then replaces the document; does not apply it (reload does). */
  async save(text: string, origin: ChangeOrigin): Promise<void> {
    await this.checkStartable(text);
    await this.configuration.saveText(text, origin);
  }

  /**
   * Applies the file, in order with every other change (Configuration.reload); `changed` is false when
   * it was the text already applied. With `deploy`, each package instance whose resolved settings changed
   * (or that is new) is sent `__SettingsUpdated` with its new settings. Listen URIs take effect at the next start.
   */
  async reload(
    deploy: boolean,
    by: Caller | undefined,
    origin: ChangeOrigin,
  ): Promise<{ changed: boolean; deployedTo: string[] }> {
    const reloaded = await this.configuration.reload(async (text) => {
      if (text === undefined) throw hubError('ConfigurationFileNotFound');
      return (await this.checkStartable(text)).config;
    }, origin);
    if (!reloaded || !deploy || !by) return { changed: reloaded !== undefined, deployedTo: [] };
    const before = settingsByInstance(reloaded.before);
    const deployedTo: string[] = [];
    for (const [friendlyName, settings] of settingsByInstance(reloaded.after)) {
      if (JSON.stringify(before.get(friendlyName)) === JSON.stringify(settings)) continue;
      await this.messages.sendFromHub(by, friendlyName, SETTINGS_UPDATED_KEY, settings);
      deployedTo.push(friendlyName);
    }
    return { changed: true, deployedTo };
  }

  /** startableDocument, and the listen URIs can be served by this process. */
  private async checkStartable(text: string): Promise<ConfigurationFile> {
    const file = await startableDocument(text);
    for (const uri of file.config.listenUris) this.checkListen(parseListenUri(uri));
    return file;
  }
}

/**
 * Everything a start would check but what is this process's (certificates): the document reads and
 * validates, its listen URIs are valid, and someone can still manage the hub. Throws
 * ConfigurationError (400) naming the problem.
 */
export async function startableDocument(text: string): Promise<ConfigurationFile> {
  const file = await parseConfigurationFileOffLoop(text);
  const problem = managementAccessProblem(file.config);
  if (problem) throw new ConfigurationError(problem);
  try {
    listenAddresses(file.config.listenUris, {});
  } catch (error) {
    throw new ConfigurationError(`<listenUris>: ${(error as Error).message}`);
  }
  return file;
}
