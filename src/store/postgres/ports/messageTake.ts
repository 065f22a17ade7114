/**
 * A poll's take of a message subscription on PostgreSQL, the single way (messages.ts: a take with no
 * delivery pending goes with its wake-up's others, connections/messageTakeBatch.ts), as one sequence
 * inside the caller's repeatable-read transaction: read the subscription's caller, addresses, cursor
 * and pending delivery; judge the pending delivery by the claim (ports/deliveryClaim.ts: `wait` takes
 * nothing, `redeliver` reads again from the cursor before it); read the log above the cursor in pages,
 * keeping what is addressed to the subscription, up to `limit`; then move the cursor and leave what it
 * delivers pending under the claim's token, remembering the saga requests delivered, or, delivering
 * nothing, move the cursor and end the pending delivery judged. Settling it later is pendingDeliveries.ts.
 */
import type pg from 'pg';
import { ClientGone } from '../../../errors.js';
import type { ClientSignal } from '../../../hub/polls/clientSignal.js';
import type { DeliveryClaim } from '../../../hub/ports/deliveryClaim.js';
import { judgePending } from '../../../hub/ports/deliveryClaim.js';
import type { Message, TakenMessages } from '../../../hub/ports/messages.js';
import { SAGA_RESPONSE_KEY } from '../../../hub/ports/messages.js';
import { isFor, MESSAGE_COLUMNS } from '../connections/messageTakeBatch.js';
import { addressesOf } from './messageSubscriptions.js';

const PAGE = 512;

export async function takeMessages(
  client: pg.PoolClient,
  subscription: string,
  limit: number,
  abort: ClientSignal,
  claim: DeliveryClaim | undefined,
): Promise<TakenMessages> {
  const to = await addressesOf(client, subscription);
  if (!to) return { messages: [], missed: 0 };
  const judged = judgePending(claim, to.pendingToken, to.pendingMs, Date.now());
  if (judged?.verdict === 'wait') return { messages: [], missed: 0, judged };
  const messages: Message[] = [];
  let missed = 0;
  const readFrom = judged?.verdict === 'redeliver' ? (to.redeliverFrom ?? to.readMessageId) : to.readMessageId;
  let cursor = readFrom;
  for (;;) {
    const { rows } = await client.query<Message>({
      name: 'hub_message_page',
      text: `select ${MESSAGE_COLUMNS} from messages where id > $1 order by id limit ${PAGE}`,
      values: [cursor],
    });
    if (rows.length === 0) break;
    if (rows[0].id > cursor + 1 && missed === 0) missed = rows[0].id - cursor - 1;
    for (const row of rows) {
      cursor = row.id;
      if (isFor(row, to)) {
        messages.push(row);
        if (limit > 0 && messages.length >= limit) break;
      }
    }
    if ((limit > 0 && messages.length >= limit) || rows.length < PAGE) break;
  }
  const now = Date.now();
  if (messages.length > 0) {
    if (abort.aborted) throw new ClientGone();
    // Pending until its answer is written. A concurrent take's update fails this one (40001): it runs again.
    await client.query({
      name: 'hub_message_deliver',
      text: `update subscriptions set read_message_id = $1, last_active_ms = $2, redeliver_from = $4,
             pending_token = $5, pending_ms = $2 where id = $3`,
      values: [cursor, now, subscription, readFrom, claim?.token ?? null],
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
  } else if (cursor !== to.readMessageId || judged !== undefined) {
    await client.query({
      name: 'hub_message_advance',
      text: 'update subscriptions set read_message_id = $1, pending_token = null where id = $2',
      values: [cursor, subscription],
    });
  }
  return { messages, missed, judged };
}
