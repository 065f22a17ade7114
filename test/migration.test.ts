/**
 * A database from before the logs (migration 0002) moves to cursors at start-up keeping every
 * StateObject, every subscription with its pending changes, and every queued message.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Migration, MigrationProvider } from 'kysely';
import { Migrator, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrations } from '../migrations/sqlite/index.js';
import { closeDatabase, openDatabase } from '../src/store/sqlite/database/open.js';
import { dataOf, namesAndValues, pollMessages, pollStateObjects } from './support/subscriptions.js';
import { consumer, get, hubsStoppedAfterEach, pkg, tempDir } from './support/testHub.js';

const hub = hubsStoppedAfterEach();
const app = consumer('App');

/** Builds a 0002 database by hand, as the hub before cursors left it: pending changes and queued messages. */
async function oldDatabase(dataDir: string) {
  const opened = openDatabase(path.join(dataDir, 'hub.db'), 'normal');
  const provider: MigrationProvider = { getMigrations: async (): Promise<Record<string, Migration>> => migrations };
  const { error } = await new Migrator({ db: opened.db, provider }).migrateTo('0002_repository');
  if (error) throw error;
  const objects = randomUUID();
  const messages = randomUUID();
  const now = Date.now();
  await sql`insert into callers values ('c-app', 'Consumer/App', 'consumer', 'Consumer', 'App', ${now})`.execute(
    opened.db,
  );
  for (const [name, value] of [
    ['X', 1],
    ['Y', 2],
    ['Z', 3],
  ] as const) {
    await sql`insert into state_objects (sentinel_name, package_name, name, type, value, metadatas, last_update_ms, lifetime_s, expires_at_ms)
              values ('S1', 'P1', ${name}, 'System.Int64', ${String(value)}, '{}', ${now}, 0, null)`.execute(opened.db);
  }
  await sql`insert into subscriptions (id, kind, owner_connection_id, credential_name, created_ms, last_active_ms)
            values (${objects}, 'state_objects', 'c-app', 'Dev', ${now}, ${now}), (${messages}, 'messages', 'c-app', 'Dev', ${now}, ${now})`.execute(
    opened.db,
  );
  await sql`insert into state_object_filters (subscription_id, sentinel_glob, package_glob, name_glob, type_glob, exact_name)
            values (${objects}, '*', '*', '*', '*', null)`.execute(opened.db);
  // Pending for the subscription: X changed, Gone purged. Y and Z were read already.
  await sql`insert into state_object_changes (subscription_id, sentinel_name, package_name, name, type, is_deleted)
            values (${objects}, 'S1', 'P1', 'X', 'System.Int64', 0), (${objects}, 'S1', 'P1', 'Gone', 'System.Int64', 1)`.execute(
    opened.db,
  );
  for (const data of ['1', '2']) {
    const row = await sql<{
      id: number;
    }>`insert into messages (sender_connection_id, sender_type, sender_friendly_name, scope, args, saga_id, key, data, sent_ms)
              values ('c-other', 3, 'S1/P1', 5, '[]', null, 'Old', ${data}, ${now}) returning id`.execute(opened.db);
    await sql`insert into message_deliveries (subscription_id, message_id) values (${messages}, ${row.rows[0].id})`.execute(
      opened.db,
    );
  }
  await closeDatabase(opened);
  return { objects, messages };
}

describe('migration to logs and cursors', () => {
  it('keeps pending changes and queued messages, then continues with cursors', async () => {
    const dataDir = tempDir();
    const { objects, messages } = await oldDatabase(dataDir);
    const h = await hub({ dataDir, options: { sweepIntervalMs: 50 } });
    // Sweeps run before the first poll: what is pending from before must survive them.
    await sleep(300);
    const pollObjects = async () => namesAndValues(await pollStateObjects(h, app, objects));
    const messagesOf = async () => dataOf(await pollMessages(h, app, messages));
    expect(await pollObjects()).toEqual([
      ['X', 1],
      ['Gone', 'deleted'],
    ]);
    expect(await pollObjects()).toEqual([]);
    expect(await messagesOf()).toEqual([1, 2]);
    expect(await messagesOf()).toEqual([]);
    // Every StateObject is there, and new changes and messages flow through the cursors.
    expect((await get(h, 'consumer/RequestStateObjects', app)).json<{ Name: string }[]>().map((o) => o.Name)).toEqual([
      'X',
      'Y',
      'Z',
    ]);
    await get(h, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'Y', value: 20 });
    await get(h, 'platform/SendMessage', pkg('S1', 'P1'), { scope: 'All', key: 'New', data: '3' });
    expect(await pollObjects()).toEqual([['Y', 20]]);
    expect(await messagesOf()).toEqual([3]);
  });
});
