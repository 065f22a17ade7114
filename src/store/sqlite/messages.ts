/**
 * The message log on SQLite (the MessageStore): a send is one row; a subscription reads above its cursor
 * what is addressed to it. At most `retention.count` messages, none older than `retention.ms`; a cursor
 * that fell behind is told how many it missed. Group-commit transactions (store/sqlite/database/batch.ts);
 * a poll's take is takes/messageTake.ts.
 */
import type Sqlite from 'better-sqlite3';
import type { TransactionBatcher } from './database/batch.js';
import type { Db } from './database/open.js';
import { hubError } from '../../errors.js';
import type { ClientSignal } from '../../hub/polls/clientSignal.js';
import type { MessageAddresses } from '../../hub/messageAddresses.js';
import type { DeliveryClaim } from '../../hub/ports/deliveryClaim.js';
import type { MessageStore, NewMessage, TakenMessages } from '../../hub/ports/messages.js';
import type { JoinedGroupRow, SubscriptionCallerRow, SubscriptionCursor } from '../subscriptionAddresses.js';
import { hasConfiguredGroups, subscriptionAddresses } from '../subscriptionAddresses.js';
import { MessageMemory } from './takes/messageMemory.js';
import { SqliteMessageTake } from './takes/messageTake.js';

const NO_GROUPS: string[] = [];

export interface MessageRetention {
  /** Messages kept in the log at most. */
  count: number;
  /** Age past which a message leaves the log, read or not. */
  ms: number;
}

/** A take's raw row of its subscription and caller (callerOf). */
type CallerRow = [string, string, string, string, string, number, string | null, number | null, number | null];

/** A subscription's row with its owner's (ownedNow): `kind` is the caller's, `subscription_kind` the subscription's. */
export interface OwnedSubscriptionRow extends SubscriptionCallerRow {
  subscription_kind: string;
  credential_name: string;
}

export class SqliteMessageStore implements MessageStore {
  private readonly insert;
  private readonly trim;
  private readonly maxId;
  private readonly callerOf;
  private readonly ownedOf;
  private readonly configuredGroups;
  private readonly joinedGroups;
  private readonly join;
  private readonly findSaga;
  private readonly forgetSaga;
  private readonly readByAll;
  private readonly dropRead;
  private readonly expire;
  private readonly taking: SqliteMessageTake;
  /** The log's latest rows, which a take reads instead of the file (takes/messageMemory.ts). */
  readonly memory: MessageMemory;

  constructor(
    sqlite: Sqlite.Database,
    private readonly batcher: TransactionBatcher,
    private readonly retention: MessageRetention,
  ) {
    this.insert =
      sqlite.prepare(`insert into messages (sender_connection_id, sender_type, sender_friendly_name, scope, args, saga_id, key, data, sent_ms)
      values (@senderConnectionId, @senderType, @senderFriendlyName, @scope, @args, @sagaId, @key, @data, @sentMs)`);
    // The newest row always stays: ids continue from it after a restart, so no cursor is ever ahead of the log.
    this.trim = sqlite.prepare('delete from messages where id <= ? and id < ?');
    this.maxId = sqlite.prepare('select coalesce(max(id), 0) as id from messages').pluck();
    this.callerOf = sqlite
      .prepare(
        `select c.connection_id, c.friendly_name, c.kind, c.sentinel_name, c.package_name, s.read_message_id,
        s.pending_token, s.pending_ms, s.redeliver_from
      from subscriptions s join callers c on c.connection_id = s.owner_connection_id where s.id = cast(? as text)`,
      )
      .raw();
    // A poll's first read: the subscription's owner and pending delivery with its caller's names, in one
    // statement. It, the take's read above and the group reads below (twice a poll) bind through casts,
    // so that statistics on the file never make SQLite re-prepare them at every bind (takes/stateObjectTake.ts).
    this.ownedOf =
      sqlite.prepare(`select s.kind as subscription_kind, s.credential_name, s.pending_token, s.pending_ms, s.read_message_id,
        s.redeliver_from, c.connection_id, c.friendly_name, c.kind, c.sentinel_name, c.package_name
      from subscriptions s join callers c on c.connection_id = s.owner_connection_id where s.id = cast(? as text)`);
    this.configuredGroups = sqlite
      .prepare(
        'select group_name from package_instance_groups where sentinel_name = cast(? as text) and instance_name = cast(? as text)',
      )
      .pluck();
    this.joinedGroups = sqlite.prepare(
      'select group_name, joined_after from message_group_members where subscription_id = cast(? as text)',
    );
    this.join = sqlite.prepare(`insert into message_group_members (subscription_id, group_name, joined_after)
      values (?, ?, (select coalesce(max(id), 0) from messages)) on conflict do nothing`);
    this.findSaga = sqlite.prepare('delete from saga_requests where connection_id = ? and saga_id = ?');
    this.forgetSaga = sqlite.prepare('delete from saga_requests where received_ms < ?');
    // A pending delivery may be read again from the cursor before it.
    this.readByAll = sqlite
      .prepare(
        `select min(case when pending_token is null then read_message_id else min(read_message_id, redeliver_from) end)
         from subscriptions where kind = 'messages'`,
      )
      .pluck();
    this.expire = sqlite.prepare('delete from messages where sent_ms < ? and id < ?');
    // Read by every cursor, but maybe still pending for a subscription from before the log (migration 0003).
    this.dropRead = sqlite.prepare(`delete from messages where id <= ? and id < ?
      and not exists (select 1 from message_deliveries d where d.message_id = messages.id)`);
    this.memory = new MessageMemory(this.maxId.get() as number);
    this.taking = new SqliteMessageTake(sqlite, this.memory);
  }

  /**
   * Appends the message to the log and trims the log to its count. With `sagaReplyBy`, the message is
   * a saga reply exempt from authorizations: it is stored only if that caller received a request of
   * this saga and has not answered it yet (the request is then answered); otherwise 403.
   */
  send(message: NewMessage, options: { sagaReplyBy?: string; refusal?: string } = {}): Promise<number> {
    return this.batcher.run(() => {
      if (options.sagaReplyBy !== undefined) {
        const answered = message.sagaId !== null && this.findSaga.run(options.sagaReplyBy, message.sagaId).changes > 0;
        if (!answered) {
          throw hubError(
            'MessageNotAuthorized',
            `${(options.refusal ?? 'Denied').replace(/\.?$/, '.')} A saga reply is exempt only from a caller that received a request of that saga and has not answered it yet.`,
          );
        }
      }
      const id = Number(this.insert.run(message).lastInsertRowid);
      this.trim.run(id - this.retention.count, id);
      // The row as a take reads it (takes/messageTake.ts, messageOf: the same keys in the same order).
      this.memory.sent({
        id,
        senderConnectionId: message.senderConnectionId,
        senderType: message.senderType,
        senderFriendlyName: message.senderFriendlyName,
        scope: message.scope,
        args: message.args,
        sagaId: message.sagaId,
        key: message.key,
        data: message.data,
        sentMs: message.sentMs,
      });
      this.memory.trimmed(id - this.retention.count);
      return id;
    });
  }

  /** Inside a subscription's transaction: the caller's names and groups, its cursor and what is pending. */
  addressesNow(subscription: string): (MessageAddresses & SubscriptionCursor) | undefined {
    const r = this.callerOf.get(subscription) as CallerRow | undefined;
    if (!r) return undefined;
    const c: SubscriptionCallerRow = {
      connection_id: r[0],
      friendly_name: r[1],
      kind: r[2],
      sentinel_name: r[3],
      package_name: r[4],
      read_message_id: r[5],
      pending_token: r[6],
      pending_ms: r[7],
      redeliver_from: r[8],
    };
    return this.addressesOfNow(subscription, c);
  }

  /**
   * Inside a transaction: any subscription `id` with its owner (its caller's connection id and its
   * credential), its kind and, for a message subscription, what addressesOfNow needs; one statement.
   */
  ownedNow(id: string): OwnedSubscriptionRow | undefined {
    return this.ownedOf.get(id) as OwnedSubscriptionRow | undefined;
  }

  /** Inside a transaction: addressesNow from the subscription's row already read. */
  addressesOfNow(subscription: string, c: SubscriptionCallerRow): MessageAddresses & SubscriptionCursor {
    const configured = hasConfiguredGroups(c.kind)
      ? (this.configuredGroups.all(c.sentinel_name, c.package_name) as string[])
      : NO_GROUPS;
    return subscriptionAddresses(c, configured, this.joinedGroups.all(subscription) as JoinedGroupRow[]);
  }

  /** Inside a transaction: a new message subscription's cursor is the end of the log. */
  endOfLogNow(): number {
    return this.maxId.get() as number;
  }

  /** Inside a subscription's transaction: joins a group (once); only later messages reach it. */
  joinGroupNow(subscription: string, group: string): void {
    this.join.run(subscription, group);
  }

  /**
   * Reads the oldest `limit` (0 = all) messages addressed to the subscription above its cursor and
   * moves the cursor past them, in one transaction (takes/messageTake.ts); remembers saga requests delivered,
   * so their replies are exempt. Throws ClientGone (rolling back) when `abort` fired.
   */
  take(subscription: string, limit: number, abort: ClientSignal, claim?: DeliveryClaim): Promise<TakenMessages> {
    return this.batcher.run(() =>
      this.taking.takeNow(subscription, this.addressesNow(subscription), limit, abort, claim),
    );
  }

  /**
   * Housekeeping: removes messages every subscription has read, messages past the age limit, and
   * saga requests older than the age limit. Keeps the newest row (see `trim`).
   */
  sweep(now: number): Promise<number> {
    return this.batcher.run(() => {
      const top = this.maxId.get() as number;
      const readByAll = this.readByAll.get() as number | null;
      let removed = this.dropRead.run(readByAll ?? top, top).changes;
      removed += this.expire.run(now - this.retention.ms, top).changes;
      this.forgetSaga.run(now - this.retention.ms);
      if (removed > 0) this.memory.changed();
      return removed;
    });
  }
}

export async function countQueuedMessages(db: Db): Promise<number> {
  const row = await db
    .selectFrom('messages')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
