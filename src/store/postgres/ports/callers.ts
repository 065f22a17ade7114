/** Callers on PostgreSQL (the PostgreSQL CallerStore): every identity that has talked to the hub, with its stable ConnectionId. */
import type pg from 'pg';
import type { CallerStore, NewCaller } from '../../../hub/ports/callers.js';
import { storeError } from '../connections/transaction.js';

export class PostgresCallerStore implements CallerStore {
  constructor(private readonly pool: pg.Pool) {}

  async connectionId(friendlyName: string): Promise<string | undefined> {
    try {
      const { rows } = await this.pool.query<{ connection_id: string }>({
        name: 'hub_caller_id',
        text: 'select connection_id from callers where friendly_name = $1',
        values: [friendlyName],
      });
      return rows[0]?.connection_id;
    } catch (error) {
      throw storeError(error);
    }
  }

  /** One statement, atomic across processes: the no-op update on conflict is what makes RETURNING give the row on record. */
  async record(caller: NewCaller): Promise<string> {
    try {
      const { rows } = await this.pool.query<{ connection_id: string }>({
        name: 'hub_record_caller',
        text: `insert into callers (connection_id, friendly_name, kind, sentinel_name, package_name, first_seen_ms)
               values ($1, $2, $3, $4, $5, $6)
               on conflict (friendly_name) do update set friendly_name = excluded.friendly_name returning connection_id`,
        values: [
          caller.connectionId,
          caller.friendlyName,
          caller.kind,
          caller.sentinelName,
          caller.packageName,
          caller.firstSeenMs,
        ],
      });
      return rows[0].connection_id;
    } catch (error) {
      throw storeError(error);
    }
  }
}
