/**
 * The configuration document in the database (PostgreSQL mode), at its edges: the start that finds
 * none imports the file (HUB_CONFIG), or stores the default document when there is no file either; every
 * later start takes the database's and says so when the file differs (it never writes the file).
 * `hub config import` and `hub config export` (cli.ts) move a document in and out, byte for byte.
 */
import type { Logger } from 'pino';
import type { StartingConfiguration } from '../../config/configFile.js';
import { firstStartDocument, parseStartingDocument, readConfigurationText } from '../../config/configFile.js';
import { startableDocument } from './configurationFileActions.js';
import type { ConfigurationDocumentStore, StoredConfiguration } from '../ports/configuration.js';

export interface SharedStartingConfiguration extends StartingConfiguration {
  document: StoredConfiguration;
}

/**
 * The configuration a process on the shared database starts with: the database's, or (the database has
 * none) the file's or the default one, imported. Several processes starting at once import once. A key
 * the default one generates is handed to `keep` before it is stored.
 */
export async function sharedStartingConfiguration(
  documents: ConfigurationDocumentStore,
  configPath: string,
  adminKey: string | undefined,
  logger: Logger,
  keep: (generatedKey: string) => void = () => {},
): Promise<SharedStartingConfiguration> {
  let document = await documents.read();
  if (!document) {
    const fileText = await readConfigurationText(configPath);
    const start =
      fileText === undefined ? firstStartDocument(adminKey) : { file: parseStartingDocument(fileText), text: fileText };
    if (start.generatedAdminKey) keep(start.generatedAdminKey);
    const { document: stored, imported } = await documents.importIfNone(
      {
        writtenBy: fileText === undefined ? '(first start)' : '(file)',
        reason: 'import',
        applied: true,
        text: start.text,
      },
      start.file.config,
    );
    if (imported) {
      logger.info(
        { file: configPath, version: stored.version },
        fileText === undefined
          ? 'no configuration file and none in the database: the default configuration is stored in the database'
          : 'configuration file imported into the database: from now on the configuration lives there (the hub does not read this file again and never writes it; `hub config export` prints the current one)',
      );
      return { ...start, document: stored };
    }
    document = stored;
  }
  const onDisk = await readConfigurationText(configPath);
  if (onDisk !== undefined && onDisk !== document.text)
    logger.warn(
      { file: configPath, version: document.version },
      'the configuration file differs from the configuration in the database, which is the one applied: the file is not used (`hub config import` applies it to every process)',
    );
  return { file: parseStartingDocument(document.text), text: document.text, document };
}

/**
 * Makes `text` the document every process applies (`hub config import`), after the checks a start
 * makes; a posted document awaiting its reload is replaced too. Throws ConfigurationError, changing
 * nothing, for a text that would not start a hub. `changed` is false when it was the document already.
 */
export async function importConfiguration(
  documents: ConfigurationDocumentStore,
  text: string,
  by: string,
): Promise<{ version: number; changed: boolean }> {
  const { config } = await startableDocument(text);
  const version = { writtenBy: by, reason: 'import', applied: true, text };
  for (;;) {
    const current = await documents.read();
    if (!current) {
      const { document, imported } = await documents.importIfNone(version, config);
      if (imported) return { version: document.version, changed: true };
      continue;
    }
    if (current.text === text && current.pending === undefined) return { version: current.version, changed: false };
    const stored = await documents.replace(current.version, { text, pending: undefined }, version, config);
    if (stored) return { version: stored.version, changed: true };
  }
}

/** The document every process applies (`hub config export`); undefined when the database has none. */
export async function exportConfiguration(documents: ConfigurationDocumentStore): Promise<string | undefined> {
  return (await documents.read())?.text;
}
