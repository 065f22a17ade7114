import type Sqlite from 'better-sqlite3';
import type { StateObject, TakenStateObject } from '../../../hub/ports/stateObjects.js';

/**
 * The changes that were pending when a database moved to cursors (migration 0003): read before the
 * cursor, oldest first, then gone. Nothing writes new ones, so once empty this costs one flag check.
 */
export class StateObjectBacklog {
  private pending: boolean;
  private readonly select;
  private readonly remove;

  constructor(private readonly sqlite: Sqlite.Database) {
    this.pending = sqlite.prepare('select 1 from state_object_changes limit 1').get() !== undefined;
    this.select =
      sqlite.prepare(`select c.id as changeId, c.sentinel_name as sentinelName, c.package_name as packageName,
        c.name, c.type as changeType, c.is_deleted as changeDeleted, s.type, s.value, s.metadatas,
        s.last_update_ms as lastUpdateMs, s.lifetime_s as lifetimeS, s.is_deleted as isDeleted
      from state_object_changes c left join state_objects s
        on s.sentinel_name = c.sentinel_name and s.package_name = c.package_name and s.name = c.name
      where c.subscription_id = ? order by c.id limit ?`);
    this.remove = sqlite.prepare('delete from state_object_changes where subscription_id = ? and id <= ?');
  }

  take(subscription: string, limit: number): TakenStateObject[] {
    if (!this.pending) return [];
    // Left join: the object's columns are null when it is gone.
    type Row = StateObject & { changeId: number; changeType: string; changeDeleted: number; isDeleted: number | null };
    const rows = this.select.all(subscription, limit > 0 ? limit : -1) as Row[];
    if (rows.length === 0) {
      this.pending = this.sqlite.prepare('select 1 from state_object_changes limit 1').get() !== undefined;
      return [];
    }
    this.remove.run(subscription, rows[rows.length - 1].changeId);
    return rows.map((r) => ({
      sentinelName: r.sentinelName,
      packageName: r.packageName,
      name: r.name,
      type: r.type ?? r.changeType,
      current: r.changeDeleted || r.value === null || r.isDeleted ? undefined : r,
    }));
  }
}
