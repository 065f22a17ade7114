/** The console's activity on PostgreSQL (the PostgreSQL ActivityStore): one repeatable-read snapshot per read. */
import type pg from 'pg';
import type { MessageAddresses, SentMessage } from '../../hub/messageAddresses.js';
import { isAddressedTo } from '../../hub/messageAddresses.js';
import type { ActivityStore, InstanceActivity } from '../../hub/ports/activity.js';
import type { InstanceKey } from '../../hub/ports/descriptors.js';
import { transaction } from './transaction.js';

/** Unread messages are counted over this many of the newest log entries at most (a console view, not a scan of the log). */
const COUNTED_LOG_ENTRIES = 10_000;

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
        const subscriptions = await client.query<{
          id: string;
          kind: string;
          read_message_id: number;
          last_active_ms: number;
          connection_id: string;
          friendly_name: string;
          caller_kind: string;
          sentinel_name: string;
          package_name: string;
        }>(
          `select s.id, s.kind, s.read_message_id, s.last_active_ms, c.connection_id, c.friendly_name, c.kind as caller_kind, c.sentinel_name, c.package_name
         from subscriptions s join callers c on c.connection_id = s.owner_connection_id`,
        );
        const joined = (
          await client.query<{ subscription_id: string; group_name: string; joined_after: number }>(
            'select subscription_id, group_name, joined_after from message_group_members',
          )
        ).rows;
        const configured = (
          await client.query<{ sentinel_name: string; instance_name: string; group_name: string }>(
            'select sentinel_name, instance_name, group_name from package_instance_groups',
          )
        ).rows;
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
        const result = new Map<string, InstanceKey & { queued: number; lastActiveMs: number }>();
        for (const s of subscriptions.rows) {
          const key = `${s.sentinel_name}\u0000${s.package_name}`;
          let entry = result.get(key);
          if (!entry)
            result.set(
              key,
              (entry = { sentinelName: s.sentinel_name, packageName: s.package_name, queued: 0, lastActiveMs: 0 }),
            );
          entry.lastActiveMs = Math.max(entry.lastActiveMs, s.last_active_ms);
          if (s.kind !== 'messages') continue;
          const isPackage = s.caller_kind === 'package';
          const groups = new Map<string, number>();
          if (isPackage)
            for (const g of configured)
              if (g.sentinel_name === s.sentinel_name && g.instance_name === s.package_name)
                groups.set(g.group_name, 0);
          for (const g of joined)
            if (g.subscription_id === s.id && !groups.has(g.group_name)) groups.set(g.group_name, g.joined_after);
          const to: MessageAddresses = {
            connectionId: s.connection_id,
            friendlyName: s.friendly_name,
            isPackage,
            sentinelName: s.sentinel_name,
            packageName: s.package_name,
            groups,
          };
          entry.queued += log.filter((m) => m.id > s.read_message_id && isAddressedTo(m, to)).length;
        }
        const lastLogs = await client.query<
          InstanceActivity['lastLogs'][number]
        >(`select sentinel_name as "sentinelName", package_name as "packageName",
        level, message, logged_ms as "loggedMs" from package_logs
        where id in (select max(id) from package_logs group by sentinel_name, package_name)`);
        return { stateObjects: stateObjects.rows, subscriptions: [...result.values()], lastLogs: lastLogs.rows };
      },
      { isolation: 'repeatable read' },
    );
  }
}
