/** Hub settings on PostgreSQL (the PostgreSQL HubSettingStore): the license, one statement per operation. */
import type pg from 'pg';
import type { HubSettingStore } from '../../../hub/ports/hubSettings.js';
import { query } from '../connections/transaction.js';

const LICENSE_KEY = 'license';

export class PostgresHubSettingStore implements HubSettingStore {
  constructor(private readonly pool: pg.Pool) {}

  async license(): Promise<string | undefined> {
    return (
      await query<{ value: string }>(this.pool, 'select value from hub_settings where key = $1', [LICENSE_KEY])
    )[0]?.value;
  }

  async setLicense(text: string): Promise<void> {
    await query(
      this.pool,
      'insert into hub_settings (key, value) values ($1, $2) on conflict (key) do update set value = excluded.value',
      [LICENSE_KEY, text],
    );
  }
}
