/** The console's activity on PostgreSQL (the PostgreSQL ActivityStore): one repeatable-read snapshot per read. */
import type pg from 'pg';
import type { SentMessage } from '../../../hub/messageAddresses.js';
import type { ActivityStore, InstanceActivity } from '../../../hub/ports/activity.js';
import type { InstanceKey } from '../../../hub/ports/descriptors.js';
import type { ActivityRows } from '../../instanceActivity.js';
import { activityPerInstance, COUNTED_LOG_ENTRIES } from '../../instanceActivity.js';
import { transaction } from '../connections/transaction.js';

export class PostgresActivityStore implements ActivityStore {
  constructor(private readonly pool: pg.Pool) {}

  /** One repeatable-read snapshot (it takes no write lock on PostgreSQL, unlike SQLite). */
  instances(): Promise<InstanceActivity> {
    return transaction(
      this.pool,
      async (client) => {
        const stateObjects = await client.query<
          InstanceKey & { n: number }
        >(`select sentinel_name as "sentinelName", package_name as "packageName",
        count(*) as n from state_objects where not is_deleted group by sentinel_name, package_name`);
        const subscriptions = await client.query<ActivityRows['subscriptions'][number]>(
          `select s.id, s.kind, s.read_message_id, s.last_active_ms, c.connection_id, c.friendly_name, c.kind as caller_kind, c.sentinel_name, c.package_name
         from subscriptions s join callers c on c.connection_id = s.owner_connection_id`,
        );
        const joined = await client.query<ActivityRows['joined'][number]>(
          'select subscription_id, group_name, joined_after from message_group_members',
        );
        const configured = await client.query<ActivityRows['configured'][number]>(
          'select sentinel_name, instance_name, group_name from package_instance_groups',
        );
        const head = (await client.query<{ seq: number }>(`select seq from log_heads where log = 'messages'`)).rows[0]
          .seq;
        const log: SentMessage[] = (
          await client.query<{ id: number; scope: number; args: string; sender_connection_id: string }>(
            'select id, scope, args, sender_connection_id from messages where id > $1 order by id',
            [Math.max(0, head - COUNTED_LOG_ENTRIES)],
          )
        ).rows.map((m) => ({
          id: m.id,
          scope: m.scope,
          args: JSON.parse(m.args) as string[],
          senderConnectionId: m.sender_connection_id,
        }));
        const activity = activityPerInstance({
          subscriptions: subscriptions.rows,
          joined: joined.rows,
          configured: configured.rows,
          log,
        });
        const lastLogs = await client.query<
          InstanceActivity['lastLogs'][number]
        >(`select sentinel_name as "sentinelName", package_name as "packageName",
        level, message, logged_ms as "loggedMs" from package_logs
        where id in (select max(id) from package_logs group by sentinel_name, package_name)`);
        return { stateObjects: stateObjects.rows, subscriptions: activity, lastLogs: lastLogs.rows };
      },
      { isolation: 'repeatable read' },
    );
  }
}
