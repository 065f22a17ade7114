/**
 * The StateObject hot paths (push, purge, expiry, poll) as prepared statements, run synchronously
 * inside a batch transaction (db/batch.ts).
 */
import type Sqlite from 'better-sqlite3';
import type { ExpressionBuilder } from 'kysely';
import { sql } from 'kysely';
import type { Db } from '../db/open.js';
import type { Params } from '../db/prepared.js';
import { prepareQuery } from '../db/prepared.js';
import type { Database, NewStateObjectRow, StateObjectRow } from '../db/schema.js';
import type { StateObjectChange, StateObjectGlobs, StateObjectKey } from './stateObjects.js';

type ChangeParams = { sentinel: string; package: string; name: string; type: string };

export class StateObjectStatements {
  private readonly upsertRow;
  private readonly matchingSubscriptions;
  private readonly upsertChange;
  private readonly selectChanges;
  private readonly selectFirstChanges;
  private readonly deleteChanges;
  private readonly deleteMatching;
  private readonly expire;
  private readonly findFilter;
  private readonly insertFilter;
  private readonly queueCurrent;

  constructor(db: Db, sqlite: Sqlite.Database) {
    this.upsertRow = prepareQuery<Required<Omit<NewStateObjectRow, 'expiry_announced'>>>(sqlite, (p) =>
      db
        .insertInto('state_objects')
        .values({
          sentinel_name: p.sentinel_name,
          package_name: p.package_name,
          name: p.name,
          type: p.type,
          value: p.value,
          metadatas: p.metadatas,
          last_update_ms: p.last_update_ms,
          lifetime_s: p.lifetime_s,
          expires_at_ms: p.expires_at_ms,
          expiry_announced: 0,
        })
        .onConflict((oc) =>
          oc.columns(['sentinel_name', 'package_name', 'name']).doUpdateSet((eb) => ({
            type: eb.ref('excluded.type'),
            value: eb.ref('excluded.value'),
            metadatas: eb.ref('excluded.metadatas'),
            last_update_ms: eb.ref('excluded.last_update_ms'),
            lifetime_s: eb.ref('excluded.lifetime_s'),
            expires_at_ms: eb.ref('excluded.expires_at_ms'),
            expiry_announced: 0,
          })),
        ),
    );

    // Which subscriptions want this object: the exact-name filters through their index, the
    // wildcard ones by GLOB. A plain SELECT costs a third of an INSERT … SELECT … RETURNING when, as
    // for most pushes, nobody or few are watching.
    const matching = (p: Params<ChangeParams>) => {
      const globsMatch = (w: ExpressionBuilder<Database, 'state_object_filters'>) =>
        w.and([
          sql<boolean>`${p.sentinel} glob sentinel_glob`,
          sql<boolean>`${p.package} glob package_glob`,
          sql<boolean>`${p.type} glob type_glob`,
        ]);
      return db
        .selectFrom('state_object_filters')
        .select('subscription_id')
        .where('exact_name', '=', p.name)
        .where(globsMatch)
        .union(
          db
            .selectFrom('state_object_filters')
            .select('subscription_id')
            .where('exact_name', 'is', null)
            .where(sql<boolean>`${p.name} glob name_glob`)
            .where(globsMatch),
        );
    };
    this.matchingSubscriptions = prepareQuery<ChangeParams, { subscription_id: string }>(sqlite, matching);

    // One row per (subscription, object) however often it changes: that is what coalesces.
    this.upsertChange = prepareQuery<ChangeParams & { subscription: string; deleted: number }>(sqlite, (p) =>
      db
        .insertInto('state_object_changes')
        .values({
          subscription_id: p.subscription,
          sentinel_name: p.sentinel,
          package_name: p.package,
          name: p.name,
          type: p.type,
          is_deleted: p.deleted,
        })
        .onConflict((oc) =>
          oc.columns(['subscription_id', 'sentinel_name', 'package_name', 'name']).doUpdateSet((eb) => ({
            type: eb.ref('excluded.type'),
            is_deleted: eb.ref('excluded.is_deleted'),
          })),
        ),
    );

    // As for message queues: no bound LIMIT when the poll takes everything (the usual case).
    const changes = (p: Params<{ subscription: string }>) =>
      db
        .selectFrom('state_object_changes as c')
        .leftJoin('state_objects as s', (join) =>
          join
            .onRef('s.sentinel_name', '=', 'c.sentinel_name')
            .onRef('s.package_name', '=', 'c.package_name')
            .onRef('s.name', '=', 'c.name'),
        )
        .select([
          'c.id as change_id',
          'c.sentinel_name',
          'c.package_name',
          'c.name',
          'c.type as change_type',
          'c.is_deleted',
          's.type',
          's.value',
          's.metadatas',
          's.last_update_ms',
          's.lifetime_s',
          's.expires_at_ms',
          's.expiry_announced',
        ])
        .where('c.subscription_id', '=', p.subscription)
        .orderBy('c.id');
    this.selectChanges = prepareQuery<{ subscription: string }>(sqlite, changes);
    this.selectFirstChanges = prepareQuery<{ subscription: string; limit: number }>(sqlite, (p) => changes(p).limit(p.limit));

    this.deleteChanges = prepareQuery<{ subscription: string; upTo: number }>(sqlite, (p) =>
      db.deleteFrom('state_object_changes').where('subscription_id', '=', p.subscription).where('id', '<=', p.upTo),
    );

    this.deleteMatching = prepareQuery<{ sentinel: string; package: string; name: string; type: string }, { name: string; type: string }>(
      sqlite,
      (p) =>
        db
          .deleteFrom('state_objects')
          .where('sentinel_name', '=', p.sentinel)
          .where('package_name', '=', p.package)
          .where(sql<boolean>`name glob ${p.name}`)
          .where(sql<boolean>`type glob ${p.type}`)
          .returning(['name', 'type']),
    );

    type FilterParams = { subscription: string; sentinel: string; package: string; name: string; type: string };
    this.findFilter = prepareQuery<FilterParams, { id: number }>(sqlite, (p) =>
      db
        .selectFrom('state_object_filters')
        .select('id')
        .where('subscription_id', '=', p.subscription)
        .where('sentinel_glob', '=', p.sentinel)
        .where('package_glob', '=', p.package)
        .where('name_glob', '=', p.name)
        .where('type_glob', '=', p.type),
    );
    this.insertFilter = prepareQuery<FilterParams & { exactName: string | null }>(sqlite, (p) =>
      db.insertInto('state_object_filters').values({
        subscription_id: p.subscription,
        sentinel_glob: p.sentinel,
        package_glob: p.package,
        name_glob: p.name,
        type_glob: p.type,
        exact_name: p.exactName,
      }),
    );
    this.queueCurrent = prepareQuery<FilterParams>(sqlite, (p) =>
      db
        .insertInto('state_object_changes')
        .columns(['subscription_id', 'sentinel_name', 'package_name', 'name', 'type', 'is_deleted'])
        .expression((eb) =>
          eb
            .selectFrom('state_objects')
            .select([eb.val(p.subscription).as('subscription_id'), 'sentinel_name', 'package_name', 'name', 'type', eb.val(0).as('is_deleted')])
            .where(sql<boolean>`sentinel_name glob ${p.sentinel}`)
            .where(sql<boolean>`package_name glob ${p.package}`)
            .where(sql<boolean>`name glob ${p.name}`)
            .where(sql<boolean>`type glob ${p.type}`),
        )
        .onConflict((oc) => oc.columns(['subscription_id', 'sentinel_name', 'package_name', 'name']).doUpdateSet({ is_deleted: 0 })),
    );

    this.expire = prepareQuery<{ now: number }, { sentinel_name: string; package_name: string; name: string; type: string }>(
      sqlite,
      (p) =>
        db
          .updateTable('state_objects')
          .set({ expiry_announced: 1 })
          .where('expires_at_ms', 'is not', null)
          .where('expires_at_ms', '<=', p.now)
          .where('expiry_announced', '=', 0)
          .returning(['sentinel_name', 'package_name', 'name', 'type']),
    );
  }

  upsert(row: Required<Omit<NewStateObjectRow, 'expiry_announced'>>): void {
    this.upsertRow.run(row);
  }

  /** Records the change for every subscription with a matching filter; returns their ids. */
  recordChange(object: StateObjectKey & { type: string }, isDeleted: boolean): string[] {
    const change = { sentinel: object.sentinelName, package: object.packageName, name: object.name, type: object.type };
    const ids = this.matchingSubscriptions.all(change).map((r) => r.subscription_id);
    for (const subscription of ids) this.upsertChange.run({ ...change, subscription, deleted: isDeleted ? 1 : 0 });
    return ids;
  }

  /** Deletes the producer's objects matching the name and type GLOBs; returns what was deleted. */
  deleteObjects(producer: { sentinelName: string; packageName: string }, globs: { name: string; type: string }) {
    return this.deleteMatching.all({ sentinel: producer.sentinelName, package: producer.packageName, ...globs });
  }

  /**
   * Adds a filter to a subscription unless it has exactly that one already, and then queues every
   * existing object it matches (the first poll shows current values). True when added.
   */
  addFilter(subscription: string, globs: StateObjectGlobs, exactName: string | null): boolean {
    const filter = { subscription, ...globs };
    if (this.findFilter.get(filter)) return false;
    this.insertFilter.run({ ...filter, exactName });
    this.queueCurrent.run(filter);
    return true;
  }

  /** Marks objects whose lifetime ran out as announced and returns them. */
  markExpired(now: number): (StateObjectKey & { type: string })[] {
    return this.expire
      .all({ now })
      .map((r) => ({ sentinelName: r.sentinel_name, packageName: r.package_name, name: r.name, type: r.type }));
  }

  /** Reads and removes the oldest `limit` (0 = all) changes of a subscription. */
  takeChanges(subscriptionId: string, limit: number): StateObjectChange[] {
    type Row = {
      change_id: number; sentinel_name: string; package_name: string; name: string; change_type: string; is_deleted: number;
      type: string | null; value: string | null; metadatas: string | null; last_update_ms: number | null; lifetime_s: number | null;
      expires_at_ms: number | null; expiry_announced: number | null;
    };
    const rows = (limit > 0 ? this.selectFirstChanges.all({ subscription: subscriptionId, limit }) : this.selectChanges.all({ subscription: subscriptionId })) as Row[];
    if (rows.length === 0) return [];
    this.deleteChanges.run({ subscription: subscriptionId, upTo: rows[rows.length - 1].change_id });
    return rows.map((r) => {
      const type = r.type ?? r.change_type;
      const current: StateObjectRow | undefined =
        r.is_deleted || r.value === null
          ? undefined
          : {
              sentinel_name: r.sentinel_name,
              package_name: r.package_name,
              name: r.name,
              type,
              value: r.value,
              metadatas: r.metadatas ?? '{}',
              last_update_ms: r.last_update_ms ?? 0,
              lifetime_s: r.lifetime_s ?? 0,
              expires_at_ms: r.expires_at_ms,
              expiry_announced: r.expiry_announced ?? 0,
            };
      return { changeId: r.change_id, sentinelName: r.sentinel_name, packageName: r.package_name, name: r.name, type, current };
    });
  }
}
