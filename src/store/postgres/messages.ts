/**
 * Messages as one ordered log on PostgreSQL (the PostgreSQL MessageStore): a send is one row whose id
 * comes from the log's head row (logs.ts: gap-free in commit order), so a subscription's cursor
 * (`read_message_id`) never passes a message not yet committed, and a first id above cursor + 1 can
 * only mean trimmed entries ("missed"). Sends are group commits (one statement per batch); a saga reply
 * that must answer a received request runs alone, in a transaction that deletes that request first.
 * A take reads the log above the cursor in pages, in one repeatable-read snapshot, keeps what is
 * addressed to the subscription and moves the cursor, in one transaction.
 */
import type pg from 'pg';
import { ClientGone, hubError } from '../../errors.js';
import type { ClientSignal } from '../../hub/clientSignal.js';
import type { MessageAddresses, SentMessage } from '../../hub/messageAddresses.js';
import { isAddressedTo } from '../../hub/messageAddresses.js';
import type { Message, MessageStore, NewMessage, TakenMessages } from '../../hub/ports/messages.js';
import { SAGA_RESPONSE_KEY } from '../../hub/ports/messages.js';
import { GroupCommit } from './groupCommit.js';
import { appendMessages } from './logs.js';
import type { NewMessage as NewMessageRow } from './logs.js';
import type { PostgresLog } from './pool.js';
import { transaction } from './transaction.js';

export interface MessageRetention {
  count: number;
  ms: number;
}

const PAGE = 512;

/** The columns as the port names them (`AS`): the rows reach the wire records as they are. */
const COLUMNS = `id, sender_connection_id as "senderConnectionId", sender_type as "senderType",
  sender_friendly_name as "senderFriendlyName", scope, args, saga_id as "sagaId", key, data, sent_ms as "sentMs"`;

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
  log: PostgresLog;
  retention: MessageRetention;
  announce?(client: pg.PoolClient): Promise<void>;
  /** Each group commit's COMMIT duration in ms and its items (metrics). */
  committed?(commitMs: number, items: number): void;
}

type CallerRow = {
  connection_id: string;
  friendly_name: string;
  kind: string;
  sentinel_name: string;
  package_name: string;
  read_message_id: number;
};

/** Inside a transaction: the subscription's caller names and groups, and its cursor. */
export async function addressesOf(
  client: pg.PoolClient,
  subscription: string,
): Promise<(MessageAddresses & { readMessageId: number }) | undefined> {
  const { rows } = await client.query<CallerRow>({
    name: 'hub_subscription_caller',
    text: `select c.connection_id, c.friendly_name, c.kind, c.sentinel_name, c.package_name, s.read_message_id
           from subscriptions s join callers c on c.connection_id = s.owner_connection_id where s.id = $1`,
    values: [subscription],
  });
  const c = rows[0];
  if (!c) return undefined;
  const groups = new Map<string, number>();
  const isPackage = c.kind === 'package';
  if (isPackage) {
    const configured = await client.query<{ group_name: string }>({
      name: 'hub_configured_groups',
      text: 'select group_name from package_instance_groups where sentinel_name = $1 and instance_name = $2',
      values: [c.sentinel_name, c.package_name],
    });
    for (const g of configured.rows) groups.set(g.group_name, 0);
  }
  const joined = await client.query<{ group_name: string; joined_after: number }>({
    name: 'hub_joined_groups',
    text: 'select group_name, joined_after from message_group_members where subscription_id = $1',
    values: [subscription],
  });
  for (const g of joined.rows) if (!groups.has(g.group_name)) groups.set(g.group_name, g.joined_after);
  return {
    connectionId: c.connection_id,
    friendlyName: c.friendly_name,
    isPackage,
    sentinelName: c.sentinel_name,
    packageName: c.package_name,
    groups,
    readMessageId: c.read_message_id,
  };
}

/** The message log's head: the last id given (a new subscription's cursor, a joined group's start). */
export async function messageHead(client: pg.ClientBase | pg.Pool): Promise<number> {
  const { rows } = await client.query<{ seq: number }>({
    name: 'hub_message_head',
    text: `select seq from log_heads where log = 'messages'`,
  });
  return rows[0].seq;
}

export class PostgresMessageStore implements MessageStore {
  readonly #pool: pg.Pool;
  readonly #retention: MessageRetention;
  readonly #sends: GroupCommit<NewMessage, number>;
  readonly #announce: (client: pg.PoolClient) => Promise<void>;

  constructor(options: PostgresMessageStoreOptions) {
    this.#pool = options.pool;
    this.#retention = options.retention;
    this.#announce = options.announce ?? (async () => {});
    this.#sends = new GroupCommit<NewMessage, number>({
      pool: options.pool,
      log: options.log,
      write: async (client, messages) => {
        const ids = await appendMessages(client, messages.map(rowOf));
        await trim(client, ids[ids.length - 1], this.#retention.count);
        return ids;
      },
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

  take(subscription: string, limit: number, abort: ClientSignal): Promise<TakenMessages> {
    return transaction(
      this.#pool,
      async (client) => {
        const to = await addressesOf(client, subscription);
        if (!to) return { messages: [], missed: 0 };
        const messages: Message[] = [];
        let missed = 0;
        const readFrom = to.readMessageId;
        let cursor = readFrom;
        for (;;) {
          const { rows } = await client.query<Message>({
            name: 'hub_message_page',
            text: `select ${COLUMNS} from messages where id > $1 order by id limit ${PAGE}`,
            values: [cursor],
          });
          if (rows.length === 0) break;
          if (rows[0].id > cursor + 1 && missed === 0) missed = rows[0].id - cursor - 1;
          for (const row of rows) {
            const logged: SentMessage = {
              id: row.id,
              scope: row.scope,
              args: row.scope <= 3 ? (JSON.parse(row.args) as string[]) : [],
              senderConnectionId: row.senderConnectionId,
            };
            cursor = row.id;
            if (isAddressedTo(logged, to)) {
              messages.push(row);
              if (limit > 0 && messages.length >= limit) break;
            }
          }
          if ((limit > 0 && messages.length >= limit) || rows.length < PAGE) break;
        }
        const now = Date.now();
        if (messages.length > 0) {
          if (abort.aborted) throw new ClientGone();
          await client.query({
            name: 'hub_message_advance_touch',
            text: 'update subscriptions set read_message_id = greatest(read_message_id, $1), last_active_ms = $2 where id = $3',
            values: [cursor, now, subscription],
          });
          const sagas = messages
            .filter((m) => m.sagaId !== null && m.key !== SAGA_RESPONSE_KEY)
            .map((m) => m.sagaId as string);
          if (sagas.length > 0) {
            await client.query({
              name: 'hub_remember_sagas',
              text: `insert into saga_requests (connection_id, saga_id, received_ms) select $1, s, $2 from unnest($3::text[]) as s
                   on conflict (connection_id, saga_id) do update set received_ms = excluded.received_ms`,
              values: [to.connectionId, now, [...new Set(sagas)]],
            });
          }
        } else if (cursor > readFrom) {
          await client.query({
            name: 'hub_message_advance',
            text: 'update subscriptions set read_message_id = $1 where id = $2 and read_message_id < $1',
            values: [cursor, subscription],
          });
        }
        return { messages, missed };
      },
      { isolation: 'repeatable read' },
    );
  }

  /** Removes messages every subscription has read and those past the age limit, and old saga requests. */
  sweep(now: number): Promise<number> {
    return transaction(this.#pool, async (client) => {
      const cutoff = now - this.#retention.ms;
      const read = await client.query({
        name: 'hub_message_drop_read',
        text: `delete from messages where id <= (select coalesce(min(read_message_id), 0) from subscriptions where kind = 'messages')
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
