/** Settings kept in the `hub_settings` table rather than the file (the SQLite HubSettingStore), and the table's two accessors. */
import type { Db } from './database/open.js';
import type { HubSettingStore } from '../../hub/ports/hubSettings.js';

const LICENSE_KEY = 'license';

export class SqliteHubSettingStore implements HubSettingStore {
  constructor(private readonly db: Db) {}

  license(): Promise<string | undefined> {
    return readHubSetting(this.db, LICENSE_KEY);
  }

  setLicense(text: string): Promise<void> {
    return writeHubSetting(this.db, LICENSE_KEY, text);
  }
}

export async function readHubSetting(db: Db, key: string): Promise<string | undefined> {
  const row = await db.selectFrom('hub_settings').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value;
}

export async function writeHubSetting(db: Db, key: string, value: string): Promise<void> {
  await db
    .insertInto('hub_settings')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
}
