/** Settings kept in the `hub_settings` table rather than the file (the SQLite HubSettings). */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { readHubSetting, writeHubSetting } from './configuration.js';
import type { HubSettings } from './engine.js';

const LICENSE_KEY = 'license';

export class HubSettingsStore implements HubSettings {
  constructor(private readonly db: Kysely<Database>) {}

  license(): Promise<string | undefined> {
    return readHubSetting(this.db, LICENSE_KEY);
  }

  setLicense(text: string): Promise<void> {
    return writeHubSetting(this.db, LICENSE_KEY, text);
  }
}
