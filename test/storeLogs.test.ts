/**
 * What the store's housekeeping tells an operator: an expired subscription by id, kind and caller; a
 * write lock held by another process as one warning line without a stack; a subscription that fell
 * behind the message log by name and count.
 */
import Sqlite from 'better-sqlite3';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Hub } from '../src/createHub.js';
import { startHub } from '../src/createHub.js';
import type { HubOptions } from '../src/settings.js';
import { hubOptions } from '../src/settings.js';
import { consumer, get, idOf, pkg, tempDir, writeConfiguration } from './support/testHub.js';
import { until } from './support/until.js';

let running: Hub | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

async function hubWithLog(overrides: Partial<HubOptions>) {
  const dataDir = tempDir();
  const options = hubOptions({ dataDir, host: '127.0.0.1', port: 0, authFailureDelayMs: 0, ...overrides });
  writeConfiguration(options.configPath);
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write: (chunk: Buffer, _e, done) => (lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>), done()),
  });
  running = await startHub(options, pino({ level: 'info' }, sink));
  return { hub: running, dataDir, lines };
}

describe('housekeeping logs', () => {
  it('names each expired subscription with its kind, caller and credential', async () => {
    const { hub, lines } = await hubWithLog({ subscriptionIdleMs: 200, sweepIntervalMs: 50 });
    const id = idOf(await get(hub, 'consumer/SubscribeToMessage', consumer('Idle')));
    await until(() => lines.some((l) => l.subscription === id));
    expect(lines.find((l) => l.subscription === id)).toMatchObject({
      msg: 'idle subscription expired',
      kind: 'messages',
      caller: 'Consumer/Idle',
      credential: 'Dev',
    });
  });

  it("logs a sweep that met another process's write lock as one warning without a stack", async () => {
    const { hub, dataDir, lines } = await hubWithLog({ sweepIntervalMs: 50, lockWaitMs: 100 });
    const shell = new Sqlite(path.join(dataDir, 'hub.db'));
    shell.exec('BEGIN IMMEDIATE');
    try {
      await until(() => lines.some((l) => String(l.msg).startsWith('sweep skipped')));
    } finally {
      shell.exec('ROLLBACK');
      shell.close();
    }
    const skipped = lines.filter((l) => String(l.msg).startsWith('sweep skipped'));
    expect(skipped.length).toBeGreaterThan(0);
    expect(skipped[0]).toMatchObject({ level: 40 });
    expect(skipped[0]).not.toHaveProperty('err');
    expect(lines.some((l) => l.msg === 'sweep failed')).toBe(false);
    expect((await get(hub, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'After', value: 1 })).status).toBe(204);
  });

  it('names a subscription that fell behind the message log, its caller and how many it missed', async () => {
    const { hub, lines } = await hubWithLog({ messageQueueLimit: 2 });
    const id = idOf(await get(hub, 'consumer/SubscribeToMessage', consumer('Slow')));
    for (let i = 1; i <= 5; i++)
      await get(hub, 'platform/SendMessage', pkg('S1', 'P1'), { scope: 'All', key: 'N', data: String(i) });
    expect(
      (await get(hub, 'consumer/GetMessages', consumer('Slow'), { subscriptionId: id, timeout: 0 }))
        .json<{ Data: number }[]>()
        .map((m) => m.Data),
    ).toEqual([4, 5]);
    expect(lines.find((l) => l.subscription === id)).toMatchObject({
      level: 40,
      caller: 'Consumer/Slow',
      credential: 'Dev',
      missed: 3,
    });
  });
});
