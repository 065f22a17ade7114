/** Callers on SQLite (the CallerStore): every identity that has talked to the hub, with its stable ConnectionId. */
import type { Db } from './database/open.js';
import type { CallerStore, NewCaller } from '../../hub/ports/callers.js';

export class SqliteCallerStore implements CallerStore {
  constructor(private readonly db: Db) {}

  async connectionId(friendlyName: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('callers')
      .select('connection_id')
      .where('friendly_name', '=', friendlyName)
      .executeTakeFirst();
    return row?.connection_id;
  }

  /** One statement: the no-op update on conflict is what makes RETURNING give the existing row. */
  async record(caller: NewCaller): Promise<string> {
    const row = await this.db
      .insertInto('callers')
      .values({
        connection_id: caller.connectionId,
        friendly_name: caller.friendlyName,
        kind: caller.kind,
        sentinel_name: caller.sentinelName,
        package_name: caller.packageName,
        first_seen_ms: caller.firstSeenMs,
      })
      .onConflict((oc) =>
        oc.column('friendly_name').doUpdateSet((eb) => ({ friendly_name: eb.ref('excluded.friendly_name') })),
      )
      .returning('connection_id')
      .executeTakeFirstOrThrow();
    return row.connection_id;
  }
}
