/**
 * Messages as one ordered log on PostgreSQL (the PostgreSQL MessageStore): a send is one row whose id
 * comes from the log's head row (logs.ts: gap-free in commit order), so a subscription's cursor
 * (`read_message_id`) never passes a message not yet committed, and a first id above cursor + 1 can
 * only mean trimmed entries ("missed"). Sends are group commits (one statement per batch); a saga reply
 * that must answer a received request runs alone, in a transaction that deletes that request first.
 * A take reads the log above the cursor in pages, in one repeatable-read snapshot, keeps what is
 * addressed to the subscription and moves the cursor, in one transaction (messageTake.ts; the common
 * case: the takes of one wake-up together, messageTakeBatch.ts).
 */
import type pg from 'pg';
import { hubError } from '../../../errors.js';
import type { ClientSignal } from '../../../hub/polls/clientSignal.js';
import type { DeliveryClaim } from '../../../hub/ports/deliveryClaim.js';
import type { MessageStore, NewMessage, TakenMessages } from '../../../hub/ports/messages.js';
import { GroupCommit } from '../connections/groupCommit.js';
import type { BatchedMessageTake } from '../connections/messageTakeBatch.js';
import { takeMessageBatch } from '../connections/messageTakeBatch.js';
import { takeMessages } from './messageTake.js';
import { appendMessages } from '../connections/logs.js';
import type { NewMessage as NewMessageRow } from '../connections/logs.js';
import type { OwnCommits } from '../feed/ownCommits.js';
import type { PostgresLog } from '../connections/pool.js';
import { TakeBatch } from '../connections/takeBatch.js';
import { transaction } from '../connections/transaction.js';

export interface MessageRetention {
  count: number;
  ms: number;
}

const rowOf = (m: NewMessage): NewMessageRow => ({
  sender_connection_id: m.senderConnectionId,
  sender_type: m.senderType,
  sender_friendly_name: m.senderFriendlyName,
  scope: m.scope,
  args: m.args,
  saga_id: m.sagaId,
  key: m.key,
  data: m.data,
  sent_ms: m.sentMs,
});

export interface PostgresMessageStoreOptions {
  pool: pg.Pool;
  /** The pool of its group commit (this process's write connections, hubStore.ts); default `pool`. */
  writes?: pg.Pool;
  log: PostgresLog;
  retention: MessageRetention;
  announce?(client: pg.PoolClient): Promise<void>;
  /** Each group commit's COMMIT duration in ms and its items (metrics). */
  committed?(commitMs: number, items: number): void;
  /** Where a send batch records the ids it committed (this process's tail reader skips them). */
  own?: OwnCommits;
}

export class PostgresMessageStore implements MessageStore {
  readonly #pool: pg.Pool;
  readonly #retention: MessageRetention;
  readonly #sends: GroupCommit<NewMessage, number>;
  readonly #announce: (client: pg.PoolClient) => Promise<void>;
  /** The claimed takes of one wake-up, one transaction per batch. */
  readonly #takes: TakeBatch<BatchedMessageTake, TakenMessages>;

  constructor(options: PostgresMessageStoreOptions) {
    this.#pool = options.pool;
    const pool = options.pool;
    this.#takes = new TakeBatch({
      run: (takes) => takeMessageBatch(pool, takes, true),
      runAlone: async (take) => (await takeMessageBatch(pool, [take], false))[0],
      subscriptionOf: (take) => take.subscription,
    });
    this.#retention = options.retention;
    this.#announce = options.announce ?? (async () => {});
    const own = options.own;
    this.#sends = new GroupCommit<NewMessage, number>({
      pool: options.writes ?? options.pool,
      log: options.log,
      write: async (client, messages) => {
        const ids = await appendMessages(client, messages.map(rowOf));
        await trim(client, ids[ids.length - 1], this.#retention.count);
        return ids;
      },
      onCommit: own && ((_, ids) => own.committed('messages', ids[0], ids[ids.length - 1])),
      afterCommit: (client) => this.#announce(client),
      committed: options.committed,
    });
  }

  /**
   * Appends the message and trims the log to its count. With `sagaReplyBy`: stored only if that caller
   * received a request of this saga and has not answered it (the request is then answered); else 403.
   */
  async send(message: NewMessage, options: { sagaReplyBy?: string; refusal?: string } = {}): Promise<number> {
    if (options.sagaReplyBy === undefined) return this.#sends.submit(message);
    const replyBy = options.sagaReplyBy;
    const id = await transaction(this.#pool, async (client) => {
      const answered =
        message.sagaId !== null &&
        ((
          await client.query({
            name: 'hub_answer_saga',
            text: 'delete from saga_requests where connection_id = $1 and saga_id = $2',
            values: [replyBy, message.sagaId],
          })
        ).rowCount ?? 0) > 0;
      if (!answered) {
        throw hubError(
          'MessageNotAuthorized',
          `${(options.refusal ?? 'Denied').replace(/\.?$/, '.')} A saga reply is exempt only from a caller that received a request of that saga and has not answered it yet.`,
        );
      }
      const [stored] = await appendMessages(client, [rowOf(message)]);
      await trim(client, stored, this.#retention.count);
      return stored;
    });
    await this.#ring();
    return id;
  }

  /** A claim works as the port says: what it delivers stays pending, a pending delivery found is judged first. */
  async take(subscription: string, limit: number, abort: ClientSignal, claim?: DeliveryClaim): Promise<TakenMessages> {
    // The common case, no delivery pending, with the wake-up's other takes (messageTakeBatch.ts); the
    // rest the single way (messageTake.ts).
    if (claim && !abort.aborted && Number.isSafeInteger(limit)) {
      const batched = await this.#takes.submit({ subscription, limit, token: claim.token, abort });
      if (batched) return batched;
    }
    return transaction(this.#pool, (client) => takeMessages(client, subscription, limit, abort, claim), {
      isolation: 'repeatable read',
    });
  }

  /** Removes messages every subscription has read and those past the age limit, and old saga requests. */
  sweep(now: number): Promise<number> {
    return transaction(this.#pool, async (client) => {
      const cutoff = now - this.#retention.ms;
      const read = await client.query({
        name: 'hub_message_drop_read',
        text: `delete from messages where id <= (select coalesce(min(case when pending_token is null then read_message_id
                 else least(read_message_id, redeliver_from) end), 0) from subscriptions where kind = 'messages')
               or (not exists (select 1 from subscriptions where kind = 'messages'))`,
      });
      const old = await client.query({
        name: 'hub_message_expire',
        text: 'delete from messages where sent_ms < $1',
        values: [cutoff],
      });
      await client.query({
        name: 'hub_saga_forget',
        text: 'delete from saga_requests where received_ms < $1',
        values: [cutoff],
      });
      return (read.rowCount ?? 0) + (old.rowCount ?? 0);
    });
  }

  async #ring(): Promise<void> {
    const client = await this.#pool.connect().catch(() => undefined);
    if (!client) return;
    try {
      await this.#announce(client);
    } catch {
      // A hint: the other processes' fallback read covers a lost one.
    } finally {
      client.release();
    }
  }
}

/** Keeps the newest `count` messages (ids are gap-free: one range delete by primary key). */
async function trim(client: pg.PoolClient, newest: number, count: number): Promise<void> {
  await client.query({
    name: 'hub_message_trim',
    text: 'delete from messages where id <= $1',
    values: [newest - count],
  });
}

export async function countQueuedMessages(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>('select count(*) as n from messages');
  return rows[0].n;
}
