/**
 * A poll's take of a message subscription on SQLite, as one sequence inside one group-commit
 * transaction (SqliteMessageStore.take): read the subscription's caller, addresses, cursor and pending
 * delivery; judge the pending delivery by the claim (ports/deliveryClaim.ts: `wait` takes nothing,
 * `redeliver` reads again from the cursor before it); read the log above the cursor in pages (from
 * memory when it holds all of it: messageMemory.ts), keeping what is addressed to the subscription, up
 * to `limit`; then move the cursor and leave what it delivers pending under the claim's token (one
 * statement), remembering the saga requests delivered, or, delivering nothing, move the cursor and end
 * the pending delivery judged. Settling a pending delivery later is ../pendingDeliveries.ts.
 */
import type Sqlite from 'better-sqlite3';
import { ClientGone } from '../../../errors.js';
import type { ClientSignal } from '../../../hub/polls/clientSignal.js';
import type { MessageAddresses, SentMessage } from '../../../hub/messageAddresses.js';
import { isAddressedTo } from '../../../hub/messageAddresses.js';
import type { DeliveryClaim } from '../../../hub/ports/deliveryClaim.js';
import { judgePending } from '../../../hub/ports/deliveryClaim.js';
import type { Message, TakenMessages } from '../../../hub/ports/messages.js';
import { SAGA_RESPONSE_KEY } from '../../../hub/ports/messages.js';
import type { SubscriptionCursor } from '../../subscriptionAddresses.js';
import type { LoggedMessage, MessageMemory } from './messageMemory.js';
import { NO_ARGS, namesTargets } from './messageMemory.js';
import { answeredFromMemory, verifyingTakes, verifyMessageRead } from './verifyTakes.js';

/**
 * A messages row (alias `m`), read raw (arrays: better-sqlite3 naming each row's keys costs about 1 µs
 * a row, and every woken take of a fan-out reads the same new rows) and made the domain's Message by
 * `messageOf`.
 */
const MESSAGE_COLUMNS = `m.id, m.sender_connection_id, m.sender_type, m.sender_friendly_name, m.scope, m.args, m.saga_id,
  m.key, m.data, m.sent_ms`;
type MessageRow = [number, string, number, string, number, string, string | null, string, string, number];

/** A raw row of MESSAGE_COLUMNS (and anything after them) as the domain's Message. */
const messageOf = (r: MessageRow | [...MessageRow, ...unknown[]]): Message => ({
  id: r[0],
  senderConnectionId: r[1],
  senderType: r[2],
  senderFriendlyName: r[3],
  scope: r[4],
  args: r[5],
  sagaId: r[6],
  key: r[7],
  data: r[8],
  sentMs: r[9],
});

/** What a read of the log above a cursor found: the messages addressed to the subscription, where it stopped, how many it missed. */
interface LogRead {
  messages: Message[];
  cursor: number;
  missed: number;
}

/** Rows scanned per page when a cursor catches up. */
const PAGE = 512;

export class SqliteMessageTake {
  private readonly page;
  private readonly advance;
  private readonly deliver;
  private readonly rememberSaga;
  private readonly backlog: MessageBacklog;

  constructor(
    sqlite: Sqlite.Database,
    private readonly memory: MessageMemory,
  ) {
    // The page size is part of the SQL: a bound LIMIT costs several µs per read (measured).
    this.page = sqlite
      .prepare(`select ${MESSAGE_COLUMNS} from messages m where m.id > ? order by m.id limit ${PAGE}`)
      .raw();
    this.advance = sqlite.prepare('update subscriptions set read_message_id = ?, pending_token = null where id = ?');
    this.deliver = sqlite.prepare(`update subscriptions set read_message_id = ?, last_active_ms = ?, redeliver_from = ?,
      pending_token = ?, pending_ms = ? where id = ?`);
    this.rememberSaga = sqlite.prepare(`insert into saga_requests (connection_id, saga_id, received_ms) values (?, ?, ?)
      on conflict do update set received_ms = excluded.received_ms`);
    this.backlog = new MessageBacklog(sqlite);
  }

  /**
   * Inside a transaction: reads the oldest `limit` (0 = all) messages addressed to the subscription
   * (`to`: its addresses and cursor as SqliteMessageStore.addressesNow reads them; undefined, it is
   * gone) above its cursor and moves the cursor past them, under the claim as the header says. Throws
   * ClientGone when `abort` fired: the caller's transaction rolls back and nothing is consumed.
   */
  takeNow(
    subscription: string,
    to: (MessageAddresses & SubscriptionCursor) | undefined,
    limit: number,
    abort: ClientSignal,
    claim: DeliveryClaim | undefined,
  ): TakenMessages {
    if (!to) return { messages: [], missed: 0 };
    const now = Date.now();
    const judged = judgePending(claim, to.pendingToken, to.pendingMs, now);
    if (judged?.verdict === 'wait') return { messages: [], missed: 0, judged };
    const readFrom = judged?.verdict === 'redeliver' ? (to.redeliverFrom ?? to.readMessageId) : to.readMessageId;
    const backlog = this.backlog.take(subscription, limit);
    const { messages, cursor, missed } =
      backlog.length > 0
        ? { messages: backlog, cursor: readFrom, missed: 0 }
        : this.readNow(subscription, readFrom, to, limit);
    if (messages.length > 0) {
      if (abort.aborted) throw new ClientGone();
      // Active now, in the transaction that consumed (an answer waits for no second commit); one
      // statement with the cursor and what stays pending until the answer is written.
      this.deliver.run(cursor, now, readFrom, claim?.token ?? null, now, subscription);
      for (const m of messages) {
        if (m.sagaId !== null && m.key !== SAGA_RESPONSE_KEY) this.rememberSaga.run(to.connectionId, m.sagaId, now);
      }
    } else if (cursor !== to.readMessageId || judged !== undefined) {
      this.advance.run(cursor, subscription);
    }
    return { messages, missed, judged };
  }

  /** Inside a transaction: the log above `from`, from memory when it has all of it, else from the file. */
  private readNow(subscription: string, from: number, to: MessageAddresses, limit: number): LogRead {
    const known = this.memory.after(from);
    if (!known) return this.readFileNow(from, to, limit);
    answeredFromMemory();
    const read = addressedOf(known, from, to, limit);
    if (verifyingTakes) verifyMessageRead(subscription, read, this.readFileNow(from, to, limit));
    return read;
  }

  /** Inside a transaction: the log above `from` read from the file, in pages. */
  private readFileNow(from: number, to: MessageAddresses, limit: number): LogRead {
    const messages: Message[] = [];
    let missed = 0;
    let cursor = from;
    for (;;) {
      const rows = this.page.all(cursor) as MessageRow[];
      if (rows.length === 0) break;
      if (rows[0][0] > cursor + 1 && missed === 0) missed = rows[0][0] - cursor - 1;
      for (const row of rows) {
        const logged: SentMessage = {
          id: row[0],
          scope: row[4],
          args: namesTargets(row[4]) ? (JSON.parse(row[5]) as string[]) : NO_ARGS,
          senderConnectionId: row[1],
        };
        cursor = row[0];
        if (isAddressedTo(logged, to)) {
          messages.push(messageOf(row));
          if (limit > 0 && messages.length >= limit) break;
        }
      }
      if ((limit > 0 && messages.length >= limit) || rows.length < PAGE) break;
    }
    return { messages, cursor, missed };
  }
}

/** What of the log's rows `rows` (all those above `from`) is addressed to `to`, as readFileNow reads it. */
function addressedOf(rows: LoggedMessage[], from: number, to: MessageAddresses, limit: number): LogRead {
  const messages: Message[] = [];
  let cursor = from;
  const missed = rows.length > 0 && rows[0].message.id > from + 1 ? rows[0].message.id - from - 1 : 0;
  for (const { message, sent } of rows) {
    cursor = message.id;
    if (isAddressedTo(sent, to)) {
      messages.push(message);
      if (limit > 0 && messages.length >= limit) break;
    }
  }
  return { messages, cursor, missed };
}

/**
 * The deliveries that were queued when a database moved to the log (migration 0003): read before the
 * cursor, oldest first, then gone. Nothing writes new ones, so once empty this costs one flag check.
 */
class MessageBacklog {
  private pending: boolean;
  private readonly any;
  private readonly select;
  private readonly remove;

  constructor(sqlite: Sqlite.Database) {
    this.any = sqlite.prepare('select 1 from message_deliveries limit 1');
    this.pending = this.any.get() !== undefined;
    this.select = sqlite
      .prepare(
        `select ${MESSAGE_COLUMNS}, d.id from message_deliveries d join messages m on m.id = d.message_id
        where d.subscription_id = ? order by d.id limit ?`,
      )
      .raw();
    this.remove = sqlite.prepare('delete from message_deliveries where subscription_id = ? and id <= ?');
  }

  take(subscription: string, limit: number): Message[] {
    if (!this.pending) return [];
    // Each row: the message's columns, then its delivery's id.
    const rows = this.select.all(subscription, limit > 0 ? limit : -1) as [...MessageRow, number][];
    if (rows.length === 0) {
      this.pending = this.any.get() !== undefined;
      return [];
    }
    this.remove.run(subscription, rows[rows.length - 1][10]);
    return rows.map(messageOf);
  }
}
