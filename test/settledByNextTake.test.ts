/**
 * On SQLite a written answer is not settled by a write of its own (hub/polls/deliveries.ts): its delivery
 * stays pending until the next poll of its subscription ends it in a statement it writes anyway (its
 * first read marks the subscription active), or until a graceful shutdown. These pin down what that keeps guaranteed, on a real hub and file: a
 * written answer is not read again; one whose client left before it was written is (its cursors go
 * back at once); a clean restart
 * reads nothing again; a kill -9 reads again at most the last answer of a subscription, losing nothing.
 */
import Database from 'better-sqlite3';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { authenticate } from '../src/hub/access/authentication.js';
import type { ClientSignal } from '../src/hub/polls/clientSignal.js';
import { startHubProcess } from './support/hubCli.js';
import {
  dataOf,
  pollMessages,
  pollStateObjects,
  subscribeToMessages,
  subscribeToStateObjects,
} from './support/subscriptions.js';
import type { TestHub } from './support/testHub.js';
import { consumer, hubsStoppedAfterEach, pkg, post, startTestHub, tempDir } from './support/testHub.js';

const hub = hubsStoppedAfterEach();
const app = consumer('Receiver');
const sender = consumer('Sender');
const p1 = pkg('S1', 'P1');

type Kind = 'messages' | 'objects';

const subscribe = (h: { url: string }, kind: Kind) =>
  kind === 'messages'
    ? subscribeToMessages(h, app)
    : subscribeToStateObjects(h, app, { sentinel: 'S1', package: 'P1', name: '*' });

/** Sends message `data` to All, or pushes StateObject `data` with value `value`. */
async function put(h: { url: string }, kind: Kind, data: string, value: unknown = data): Promise<void> {
  const reply =
    kind === 'messages'
      ? await post(h, 'consumer/SendMessage', sender, { Scope: { Scope: 'All' }, Key: 'K', Data: value })
      : await post(h, 'platform/PushStateObject', p1, { Name: data, Value: value });
  expect(reply.status, reply.text).toBe(204);
}

/** Logs a message or a StateObject change the subscription does not get. */
async function putElsewhere(h: { url: string }, kind: Kind): Promise<void> {
  const reply =
    kind === 'messages'
      ? await post(h, 'consumer/SendMessage', sender, {
          Scope: { Scope: 'Package', Args: ['S1/P1'] },
          Key: 'K',
          Data: 0,
        })
      : await post(h, 'platform/PushStateObject', pkg('S1', 'P2'), { Name: 'Elsewhere', Value: 0 });
  expect(reply.status, reply.text).toBe(204);
}

/** A poll answered at once: the messages' data, or the StateObjects' names. */
const poll = async (h: { url: string }, kind: Kind, id: string): Promise<unknown[]> =>
  kind === 'messages'
    ? dataOf(await pollMessages(h, app, id))
    : (await pollStateObjects(h, app, id)).map((u) => u.StateObject.Name);

/** The subscription's pending token as stored (null: nothing pending), read through a connection of its own. */
function pendingToken(dataDir: string, id: string): string | null {
  const sqlite = new Database(path.join(dataDir, 'hub.db'), { readonly: true });
  try {
    const row = sqlite.prepare('select pending_token from subscriptions where id = ?').get(id) as
      { pending_token: string | null } | undefined;
    if (!row) throw new Error(`no subscription ${id}`);
    return row.pending_token;
  } finally {
    sqlite.close();
  }
}

/**
 * A poll through the hub's services, as the HTTP layer runs it, whose response then closes before it
 * is written (the client left): what the take delivered, and the response's end told to the poll.
 */
async function pollLeftBeforeAnswer(h: TestHub, kind: Kind, id: string): Promise<number> {
  const caller = authenticate(h.services.configuration, 'consumer', {
    sentinelName: app.SentinelName,
    packageName: app.PackageName,
    accessKey: app.AccessKey,
  });
  if (!caller) throw new Error('not authenticated');
  let answered: ((sent: boolean) => void) | undefined;
  const signal: ClientSignal = {
    aborted: false,
    addEventListener: () => undefined,
    removeEventListener: () => undefined,
    whenAnswered: (listener) => (answered = listener),
  };
  const taken =
    kind === 'messages'
      ? await h.services.messages.poll(caller, id, 0, 0, signal)
      : await h.services.stateObjects.poll(caller, id, 0, 0, signal);
  if (!answered) throw new Error('the poll watches no response');
  answered(false);
  return taken?.length ?? 0;
}

describe.each(['messages', 'objects'] as const)('SQLite, %s: a written answer is settled by the next poll', (kind) => {
  it('is not read again by the next poll, and costs no write of its own', async () => {
    const h = await hub();
    const id = await subscribe(h, kind);
    expect(await poll(h, kind, id)).toEqual([]);
    await put(h, kind, 'A');
    await put(h, kind, 'B');
    expect(await poll(h, kind, id)).toEqual(['A', 'B']);
    // Written, and still pending: no write settled it.
    expect(pendingToken(h.dataDir, id)).not.toBeNull();
    // The next poll reads on past it and ends it (its first read, in the touch it writes anyway).
    expect(await poll(h, kind, id)).toEqual([]);
    expect(pendingToken(h.dataDir, id)).toBeNull();
    // A take moving the cursors past what is not for this subscription changes nothing of that.
    await putElsewhere(h, kind);
    expect(await poll(h, kind, id)).toEqual([]);
    await put(h, kind, 'C');
    expect(await poll(h, kind, id)).toEqual(['C']);
    await put(h, kind, 'D');
    // A take that delivers again ends the written one in the same statement.
    expect(await poll(h, kind, id)).toEqual(['D']);
    expect(await poll(h, kind, id)).toEqual([]);
  });

  it('one whose client left before it was written is read again at once', async () => {
    const h = await hub();
    const id = await subscribe(h, kind);
    expect(await poll(h, kind, id)).toEqual([]);
    await put(h, kind, 'A');
    await put(h, kind, 'B');
    expect(await pollLeftBeforeAnswer(h, kind, id)).toBe(2);
    expect(await poll(h, kind, id)).toEqual(['A', 'B']);
    expect(await poll(h, kind, id)).toEqual([]);
  });

  it('a graceful stop ends the written deliveries: after a restart on the same file nothing is read again', async () => {
    const dataDir = tempDir();
    const first = await startTestHub({ dataDir });
    const id = await subscribe(first, kind);
    expect(await poll(first, kind, id)).toEqual([]);
    await put(first, kind, 'A');
    expect(await poll(first, kind, id)).toEqual(['A']);
    await first.stop();
    expect(pendingToken(dataDir, id)).toBeNull();
    const second = await hub({ dataDir });
    expect(await poll(second, kind, id)).toEqual([]);
    await put(second, kind, 'B');
    expect(await poll(second, kind, id)).toEqual(['B']);
  });
});

describe('SQLite: a hub killed with written answers not settled yet', () => {
  it('reads again at most the last answer of each subscription, and loses nothing', async () => {
    const dataDir = tempDir();
    let h = await startHubProcess(dataDir);
    const ids = {
      messages: await subscribe(h, 'messages'),
      objects: await subscribe(h, 'objects'),
      messagesPolledOn: await subscribe(h, 'messages'),
    };
    expect(await poll(h, 'objects', ids.objects)).toEqual([]);
    for (const data of ['A', 'B']) {
      await put(h, 'messages', data);
      await put(h, 'objects', data);
    }
    for (const kind of ['messages', 'objects'] as const) expect(await poll(h, kind, ids[kind])).toEqual(['A', 'B']);
    expect(await poll(h, 'messages', ids.messagesPolledOn)).toEqual(['A', 'B']);
    // The next poll ended that written answer durably: it is not read again after the kill.
    expect(await poll(h, 'messages', ids.messagesPolledOn)).toEqual([]);
    await put(h, 'messages', 'C');
    await put(h, 'objects', 'C');
    h.proc.kill('SIGKILL');
    await h.exited;

    h = await startHubProcess(dataDir);
    // The last written answer is read again (at least once allows it), with what came after it.
    expect(await poll(h, 'messages', ids.messages)).toEqual(['A', 'B', 'C']);
    expect(await poll(h, 'objects', ids.objects)).toEqual(['A', 'B', 'C']);
    expect(await poll(h, 'messages', ids.messagesPolledOn)).toEqual(['C']);
    for (const kind of ['messages', 'objects'] as const) expect(await poll(h, kind, ids[kind])).toEqual([]);
    expect(await poll(h, 'messages', ids.messagesPolledOn)).toEqual([]);
    h.proc.kill('SIGTERM');
    await h.exited;
  }, 120_000);
});
