/**
 * A filter (or message group) added to a subscription while its poll is still registering (between
 * reading what the subscription listens for and waiting) is listened for: a later push or send only it
 * matches wakes the poll at once, not at its timeout.
 */
import Sqlite from 'better-sqlite3';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { consumer, get, idOf, pkg, hubsStoppedAfterEach } from './support/testHub.js';
import type { Reply, TestHub } from './support/testHub.js';
import { waitingPolls } from './support/waitingPolls.js';

const hub = hubsStoppedAfterEach();
const p1 = pkg('S1', 'P1');
const app = consumer();
/** The longest a poll may wait, longer than each test may run: only the push or the send can answer it. */
const POLL_TIMEOUT_MS = 120_000;

/**
 * Starts the poll, then adds to its subscription, while another connection holds the write lock: the
 * poll's reading of what it listens for and the addition commit in the same group commit, the read
 * first, and the addition is answered before the poll waits. Returns the waiting poll (in an object:
 * an async function returning the promise itself would wait for its answer).
 */
async function addWhilePollRegisters(
  h: TestHub,
  poll: () => Promise<Reply>,
  add: () => Promise<Reply>,
  id: string,
): Promise<{ polling: Promise<Reply> }> {
  const shell = new Sqlite(path.join(h.dataDir, 'hub.db'));
  try {
    shell.exec('BEGIN IMMEDIATE');
    const polling = poll();
    await sleep(100);
    const adding = add();
    await sleep(100);
    shell.exec('COMMIT');
    expect(idOf(await adding)).toBe(id);
    await waitingPolls(h, 1);
    return { polling };
  } finally {
    shell.close();
  }
}

describe('added while a poll registers', () => {
  it('a StateObject filter: a push only it matches wakes the poll', async () => {
    const h = await hub();
    const id = idOf(await get(h, 'consumer/SubscribeToStateObjects', app, { name: 'Old' }));
    const { polling } = await addWhilePollRegisters(
      h,
      () => get(h, 'consumer/GetStateObjects', app, { subscriptionId: id, timeout: POLL_TIMEOUT_MS }),
      () => get(h, 'consumer/SubscribeToStateObjects', app, { name: 'New', subscriptionId: id }),
      id,
    );
    expect((await get(h, 'platform/PushStateObject', p1, { name: 'New', value: 1 })).status).toBe(204);
    const answer = await polling;
    expect(answer.status).toBe(200);
    expect(answer.json<{ StateObject: { Name: string } }[]>().map((u) => u.StateObject.Name)).toEqual(['New']);
  }, 60_000);

  it('a message group: a message to only that group wakes the poll', async () => {
    const h = await hub();
    const id = idOf(await get(h, 'consumer/SubscribeToMessageGroup', app, { group: 'Kitchen' }));
    const { polling } = await addWhilePollRegisters(
      h,
      () => get(h, 'consumer/GetMessages', app, { subscriptionId: id, timeout: POLL_TIMEOUT_MS }),
      () => get(h, 'consumer/SubscribeToMessageGroup', app, { group: 'Garden', subscriptionId: id }),
      id,
    );
    const sent = await get(h, 'platform/SendMessage', p1, {
      scope: 'Group',
      args: 'Garden',
      key: 'Water',
      data: 'null',
    });
    expect(sent.status).toBe(204);
    const answer = await polling;
    expect(answer.status).toBe(200);
    expect(answer.json<{ Key: string }[]>().map((m) => m.Key)).toEqual(['Water']);
  }, 60_000);
});
