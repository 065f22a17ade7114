/**
 * Subscriptions on SQLite (the SubscriptionStore). Opening, finding and touching run in group-commit
 * transactions (store/sqlite/database/batch.ts): a StateObject subscription with its filter, a message subscription with
 * its cursor at the end of the log and its joined groups; at most `maxPerCredential` per credential.
 * The idle clocks (heartbeat, downtime, sweep) are Kysely transactions.
 */
import { randomUUID } from 'node:crypto';
import type Sqlite from 'better-sqlite3';
import { sql } from 'kysely';
import type { TransactionBatcher } from './database/batch.js';
import type { Db } from './database/open.js';
import type { SubscriptionRow } from './database/schema.js';
import { hubError } from '../../errors.js';
import type { StateObjectPatterns } from '../../hub/ports/stateObjectPatterns.js';
import type {
  ExpiredSubscription,
  OpenedSubscription,
  SubscriptionInterest,
  SubscriptionKind,
  SubscriptionOwner,
  SubscriptionStore,
} from '../../hub/ports/subscriptions.js';
import type { DeliveryClaim } from '../../hub/ports/deliveryClaim.js';
import { pendingVerdict } from '../../hub/ports/deliveryClaim.js';
import { readHubSetting, writeHubSetting } from './hubSettings.js';
import type { SqliteMessageStore } from './messages.js';
import type { SqlitePendingDeliveries } from './pendingDeliveries.js';
import type { SqliteStateObjectStore } from './stateObjects.js';

/** The hub setting that records the last moment the hub was alive (idle time counts only while it runs). */
const HEARTBEAT_KEY = 'heartbeat_ms';

export class SqliteSubscriptionStore implements SubscriptionStore {
  private readonly select;
  private readonly touch;
  private readonly touchAndEnd;
  private readonly insertRow;
  private readonly countOwned;
  private readonly deleteOwned;

  constructor(
    private readonly db: Db,
    sqlite: Sqlite.Database,
    private readonly batcher: TransactionBatcher,
    private readonly stateObjects: SqliteStateObjectStore,
    private readonly messages: SqliteMessageStore,
    private readonly pending: SqlitePendingDeliveries,
    private readonly maxPerCredential: number,
  ) {
    this.select = sqlite.prepare('select * from subscriptions where id = ?');
    this.touch = sqlite.prepare('update subscriptions set last_active_ms = ? where id = ?');
    this.touchAndEnd = sqlite.prepare('update subscriptions set last_active_ms = ?, pending_token = null where id = ?');
    this.insertRow =
      sqlite.prepare(`insert into subscriptions (id, kind, owner_connection_id, credential_name, created_ms, last_active_ms, read_message_id)
      values (?, ?, ?, ?, ?, ?, ?)`);
    this.deleteOwned = sqlite.prepare(
      'delete from subscriptions where id = ? and owner_connection_id = ? and credential_name = ? and last_active_ms < ?',
    );
    this.countOwned = sqlite.prepare('select count(*) from subscriptions where credential_name = ?').pluck();
  }

  /** Opens (or reuses) a StateObject subscription and adds the filter to it. */
  openStateObjects(
    owner: SubscriptionOwner,
    requestedId: string | undefined,
    filter: StateObjectPatterns,
  ): Promise<OpenedSubscription> {
    return this.batcher.run(() => {
      const id = this.choose(owner, 'state_objects', requestedId);
      return { id, added: this.stateObjects.addFilterNow(id, filter) };
    });
  }

  /** Opens (or reuses) a message subscription, joining `group` when given. */
  openMessages(owner: SubscriptionOwner, requestedId: string | undefined, group?: string): Promise<OpenedSubscription> {
    return this.batcher.run(() => {
      const id = this.choose(owner, 'messages', requestedId);
      if (group !== undefined) this.messages.joinGroupNow(id, group);
      return { id, added: false };
    });
  }

  /**
   * The owner's subscription of that kind (touched: active now) with what a poll of it listens for;
   * undefined when it does not exist or is someone else's. A pending delivery the poll's claim judges
   * `delivered` (a written answer, port) ends in the touch's own statement: the poll's take then finds
   * none and, with nothing new, writes nothing (instead of one more UPDATE per poll).
   */
  findOwned(
    owner: SubscriptionOwner,
    id: string,
    kind: SubscriptionKind,
    claim?: DeliveryClaim,
  ): Promise<SubscriptionInterest | undefined> {
    return this.batcher.run((): SubscriptionInterest | undefined => {
      // One statement: a message subscription's row with its caller's names (its addresses are read
      // from them), a StateObject subscription's with its filters' patterns.
      const row = kind === 'messages' ? this.messages.ownedNow(id) : this.stateObjects.ownedNow(id);
      if (
        !row ||
        row.subscription_kind !== kind ||
        row.connection_id !== owner.connectionId ||
        row.credential_name !== owner.credentialName
      )
        return undefined;
      const token = row.pending_token;
      const now = Date.now();
      const ended =
        claim !== undefined &&
        token !== null &&
        pendingVerdict(claim, { token, sinceMs: row.pending_ms ?? 0 }, now) === 'delivered';
      (ended ? this.touchAndEnd : this.touch).run(now, id);
      if ('patterns' in row) return { kind: 'state_objects', filters: row.patterns };
      return { kind: 'messages', addresses: this.messages.addressesOfNow(id, row) };
    });
  }

  /** Marks the subscription active now (its idle time starts again). */
  touched(id: string): Promise<void> {
    return this.batcher.run(() => {
      this.touch.run(Date.now(), id);
    });
  }

  removeOwned(owner: SubscriptionOwner, ids: string[], usedSince = Number.MAX_SAFE_INTEGER): Promise<number> {
    return this.batcher.run(() => {
      let removed = 0;
      for (const id of ids) {
        removed += this.deleteOwned.run(id, owner.connectionId, owner.credentialName, usedSince).changes;
        this.stateObjects.memory.forget(id);
      }
      return removed;
    });
  }

  settle(id: string, token: string, written: boolean): Promise<void> {
    return this.pending.settle(id, token, written);
  }

  consumeWritten(life: string, unsettled: string[]): Promise<void> {
    return this.pending.consumeWritten(life, unsettled);
  }

  discountDowntime(now: number): Promise<void> {
    return this.db.transaction().execute(async (trx) => {
      const last = await readHubSetting(trx, HEARTBEAT_KEY);
      if (last !== undefined && now > Number(last)) {
        await trx
          .updateTable('subscriptions')
          .set({ last_active_ms: sql<number>`last_active_ms + ${now - Number(last)}` })
          .execute();
      }
      await writeHubSetting(trx, HEARTBEAT_KEY, String(now));
    });
  }

  /** One process sweeps its own database: always (`everyMs` is for engines several processes share). */
  sweep(now: number, idleCutoff: number, keep: string[]): Promise<ExpiredSubscription[]> {
    return this.db.transaction().execute(async (trx) => {
      await writeHubSetting(trx, HEARTBEAT_KEY, String(now));
      const deleted = await deleteIdleSubscriptions(trx, idleCutoff, keep);
      for (const { id } of deleted) this.stateObjects.memory.forget(id);
      return deleted;
    });
  }

  heartbeat(now: number): Promise<void> {
    return writeHubSetting(this.db, HEARTBEAT_KEY, String(now));
  }

  private owns(row: SubscriptionRow, owner: SubscriptionOwner, kind: SubscriptionKind): boolean {
    return (
      row.kind === kind &&
      row.owner_connection_id === owner.connectionId &&
      row.credential_name === owner.credentialName
    );
  }

  /**
   * The id to use: the owner's own subscription when `requestedId` is one; the same id re-created empty
   * when it is unknown (it expired); a new id otherwise.
   */
  private choose(owner: SubscriptionOwner, kind: SubscriptionKind, requestedId: string | undefined): string {
    const now = Date.now();
    if (requestedId) {
      const row = this.select.get(requestedId) as SubscriptionRow | undefined;
      if (row && this.owns(row, owner, kind)) {
        this.touch.run(now, row.id);
        return row.id;
      }
      if (!row) {
        this.insert(requestedId, kind, owner, now);
        return requestedId;
      }
    }
    const id = randomUUID();
    this.insert(id, kind, owner, now);
    return id;
  }

  private insert(id: string, kind: SubscriptionKind, owner: SubscriptionOwner, now: number): void {
    const owned = this.countOwned.get(owner.credentialName) as number;
    if (owned >= this.maxPerCredential) {
      throw hubError('TooManySubscriptions', { credential: owner.credentialName, count: owned });
    }
    const cursor = kind === 'messages' ? this.messages.endOfLogNow() : 0;
    this.insertRow.run(id, kind, owner.connectionId, owner.credentialName, now, now, cursor);
    this.stateObjects.memory.forget(id);
  }
}

/** Removes subscriptions idle since before `cutoff`, except `keep` (those with a waiting poll); says whose they were. */
async function deleteIdleSubscriptions(db: Db, cutoff: number, keep: string[]): Promise<ExpiredSubscription[]> {
  let query = db.deleteFrom('subscriptions').where('last_active_ms', '<', cutoff);
  if (keep.length > 0 && keep.length < 30_000) query = query.where('id', 'not in', keep);
  const rows = await query
    .returning([
      'id',
      'kind',
      'credential_name',
      (eb) =>
        eb
          .selectFrom('callers')
          .select('friendly_name')
          .whereRef('callers.connection_id', '=', 'subscriptions.owner_connection_id')
          .as('friendly_name'),
    ])
    .execute();
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    credentialName: r.credential_name,
    friendlyName: r.friendly_name ?? '',
  }));
}

export async function countSubscriptions(db: Db): Promise<{ kind: string; n: number }[]> {
  const rows = await db
    .selectFrom('subscriptions')
    .select(['kind', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('kind')
    .execute();
  return rows.map((r) => ({ kind: r.kind, n: Number(r.n) }));
}
