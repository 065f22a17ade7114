/**
 * One management write's new file text, computed from the text on disk and the configuration wanted:
 * the file is edited in place (xmlEdit.ts), then read back, and the result must be the configuration
 * asked for, or nothing is written. Synchronous: offLoop.ts runs it on a worker thread for a large file.
 */
import { isDeepStrictEqual } from 'node:util';
import type { HubConfiguration } from './model.js';
import { ConfigurationError } from './validate.js';
import { parseDocument } from './xmlDocument.js';
import { editDocument } from './xmlEdit.js';
import { parseConfigurationDocument, parseConfigurationFile } from './xmlFile.js';

/** Settings are a dictionary: their order in the file is not part of what was asked. */
function comparable(config: HubConfiguration): HubConfiguration {
  const sorted = <T extends { key: string }>(settings: T[]) =>
    [...settings].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return {
    ...config,
    sentinels: config.sentinels.map((s) => ({
      ...s,
      packages: s.packages.map((p) => ({ ...p, settings: sorted(p.settings) })),
    })),
    settingsGroups: config.settingsGroups.map((g) => ({ ...g, settings: sorted(g.settings) })),
  };
}

/**
 * `text` edited so that it reads as `afterJson` (a HubConfiguration as JSON: optional members that are
 * undefined are absent, as in a configuration read from a file). Throws ConfigurationError when the
 * edited text would not read back as asked.
 */
export function editText(text: string, afterJson: string): string {
  const doc = parseDocument(text);
  const before = parseConfigurationDocument(doc).config;
  const after = JSON.parse(afterJson) as HubConfiguration;
  const edited = editDocument(doc, before, after);
  const { config: written } = parseConfigurationFile(edited);
  if (!isDeepStrictEqual(comparable(written), comparable(after))) {
    throw new ConfigurationError(
      'the edited configuration file would not read back as the change asked; nothing was changed',
    );
  }
  return edited;
}
