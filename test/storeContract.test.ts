/**
 * The store's contract, one suite for both engines (issue 22): every port of src/hub/ports, on SQLite
 * (a file in a temp directory) and on PostgreSQL (a database of this file's own; skipped, and said so,
 * without a server). Each test opens a fresh store.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { ClientGone, HubError } from '../src/errors.js';
import { createLogger } from '../src/logger.js';
import type { HubConfiguration } from '../src/config/model.js';
import type { HubStore } from '../src/hub/ports/hubStore.js';
import type { NewMessage } from '../src/hub/ports/messages.js';
import type { SubscriptionOwner } from '../src/hub/ports/subscriptions.js';
import { ScopeType } from '../src/hub/scope.js';
import { openSqliteHubStore } from '../src/store/sqlite/hubStore.js';
import { openPostgresHubStore } from '../src/store/postgres/hubStore.js';
import { tempDir } from './support/afterFile.js';
import type { TestClaim } from './support/storeTakes.js';
import {
  claim,
  consumerApp,
  messageFrom,
  packageS1P1,
  patterns,
  signal,
  shownTo,
  write,
} from './support/storeTakes.js';
import { postgresServer, testDatabase } from './support/postgres.js';

const server = await postgresServer();

type Stores = HubStore;

const retention = { count: 5, ms: 3_600_000 };
const MAX_PER_CREDENTIAL = 3;

const engines: { name: string; skip: boolean; open(): Promise<Stores> }[] = [
  {
    name: 'SQLite',
    skip: false,
    open: async () => {
      const dir = tempDir('hub-contract-');
      const store = await openSqliteHubStore({
        file: path.join(dir, 'hub.db'),
        sync: 'normal',
        lockWaitMs: 1000,
        messageRetention: retention,
        maxSubscriptionsPerCredential: MAX_PER_CREDENTIAL,
        vacuumIntervalMs: 3_600_000,
        logger: createLogger('silent'),
      });
      return {
        ...store,
        close: async () => {
          await store.close();
          fs.rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'PostgreSQL',
    skip: !server.available,
    open: async () => {
      const database = await testDatabase(server);
      const engine = await openPostgresHubStore({
        url: database.url,
        sync: 'full',
        lockWaitMs: 1000,
        messageRetention: retention,
        maxSubscriptionsPerCredential: MAX_PER_CREDENTIAL,
        log: { warn: () => {} },
      });
      return {
        ...engine,
        close: async () => {
          await engine.close();
          await database.drop();
        },
      };
    },
  },
];

describe.each(engines)('the store contract on $name', ({ skip, open }) => {
  let stores: Stores;
  let owner: SubscriptionOwner;
  let other: SubscriptionOwner;

  const newStores = async () => {
    stores = await open();
    const connectionId = await stores.callers.record(consumerApp());
    owner = { connectionId, credentialName: 'cred' };
    const otherId = await stores.callers.record(packageS1P1());
    other = { connectionId: otherId, credentialName: 'other' };
  };
  afterEach(async () => {
    await stores?.close();
  });

  const taken = async (id: string, limit = 0) =>
    (await stores.stateObjects.take(id, limit, signal())).objects.map((c) => [
      c.name,
      c.current === undefined ? 'deleted' : c.current.value,
    ]);

  describe.skipIf(skip)('StateObjectStore', () => {
    it('a new filter reads the current objects, then only what changed, each object once with its latest value, oldest change first', async () => {
      await newStores();
      await stores.stateObjects.push(write('A', 1));
      await stores.stateObjects.push(write('B', 1));
      const { id } = await stores.subscriptions.openStateObjects(owner, undefined, patterns());
      expect(await taken(id)).toEqual([
        ['A', '1'],
        ['B', '1'],
      ]);
      expect(await taken(id)).toEqual([]);
      await Promise.all([
        stores.stateObjects.push(write('C', 1)),
        stores.stateObjects.push(write('A', 2)),
        stores.stateObjects.push(write('A', 3)),
      ]);
      await stores.stateObjects.push(write('B', 2));
      expect(await taken(id, 1)).toEqual([['C', '1']]);
      expect(await taken(id)).toEqual([
        ['A', '3'],
        ['B', '2'],
      ]);
    });

    it('patterns: * is any run of characters, everything else literal (? [ _ % \\ included)', async () => {
      await newStores();
      for (const name of ['a_b', 'axb', 'a%b', 'a?b', 'a[b', 'a\\b', 'ab'])
        await stores.stateObjects.push(write(name, 1));
      const names = async (name: string) => (await stores.stateObjects.current(patterns(name))).map((o) => o.name);
      expect(await names('a_b')).toEqual(['a_b']);
      expect(await names('a%b')).toEqual(['a%b']);
      expect(await names('a?b')).toEqual(['a?b']);
      expect(await names('a[b')).toEqual(['a[b']);
      expect(await names('a\\b')).toEqual(['a\\b']);
      expect(await names('a*b')).toEqual(['a%b', 'a?b', 'a[b', 'a\\b', 'a_b', 'ab', 'axb']);
      const { id } = await stores.subscriptions.openStateObjects(owner, undefined, patterns('a_*'));
      expect(await taken(id)).toEqual([['a_b', '1']]);
      expect(await stores.stateObjects.current(patterns('*', { type: 'System.String' }))).toEqual([]);
    });

    it('a purge is a tombstone seen once by the filters that existed, not by a filter added after it', async () => {
      await newStores();
      await stores.stateObjects.push(write('A', 1));
      await stores.stateObjects.push(write('B', 1));
      const { id } = await stores.subscriptions.openStateObjects(owner, undefined, patterns());
      expect(await taken(id)).toEqual([
        ['A', '1'],
        ['B', '1'],
      ]);
      const purged = await stores.stateObjects.purge(
        { sentinelName: 'S1', packageName: 'P1' },
        { name: 'A', type: '*' },
      );
      expect(purged).toEqual([{ sentinelName: 'S1', packageName: 'P1', name: 'A', type: 'System.Int32' }]);
      expect(await taken(id)).toEqual([['A', 'deleted']]);
      expect(await taken(id)).toEqual([]);
      const later = await stores.subscriptions.openStateObjects(owner, undefined, patterns('*', { package: 'P*' }));
      expect(await taken(later.id)).toEqual([['B', '1']]);
      expect((await stores.stateObjects.current(patterns())).map((o) => o.name)).toEqual(['B']);
      expect(
        await stores.stateObjects.purge({ sentinelName: 'S1', packageName: 'P1' }, { name: 'A', type: '*' }),
      ).toEqual([]);
    });

    it('an expiry is announced once and read as a change; nextExpiry gives the earliest not announced', async () => {
      await newStores();
      await stores.stateObjects.push(write('E', 1, { lifetimeS: 1, expiresAtMs: 5_000 }));
      await stores.stateObjects.push(write('F', 1, { lifetimeS: 1, expiresAtMs: 9_000 }));
      const { id } = await stores.subscriptions.openStateObjects(owner, undefined, patterns());
      await taken(id);
      expect(await stores.stateObjects.nextExpiry()).toBe(5_000);
      expect(await stores.stateObjects.expire(6_000)).toEqual([
        { sentinelName: 'S1', packageName: 'P1', name: 'E', type: 'System.Int32' },
      ]);
      expect(await stores.stateObjects.expire(6_000)).toEqual([]);
      expect(await stores.stateObjects.nextExpiry()).toBe(9_000);
      expect(await taken(id)).toEqual([['E', '1']]);
    });

    it('a take whose client left rejects with ClientGone and consumes nothing', async () => {
      await newStores();
      await stores.stateObjects.push(write('A', 1));
      const { id } = await stores.subscriptions.openStateObjects(owner, undefined, patterns());
      const gone = new AbortController();
      gone.abort();
      await expect(stores.stateObjects.take(id, 0, gone.signal)).rejects.toBeInstanceOf(ClientGone);
      expect(await taken(id)).toEqual([['A', '1']]);
    });

    it('a claimed take leaves what it delivered pending: judged wait, nothing is taken; put back or redelivered, it is read again; written, it is consumed', async () => {
      await newStores();
      await stores.stateObjects.push(write('A', 1));
      const { id } = await stores.subscriptions.openStateObjects(owner, undefined, patterns());
      const objects = async (c: TestClaim) =>
        shownTo(c, await stores.stateObjects.take(id, 0, signal(), c)).objects.map((o) => [o.name, o.current?.value]);
      const first = claim('first');
      expect(await objects(first)).toEqual([['A', '1']]);
      expect(first.shown).toEqual([]);
      await stores.stateObjects.push(write('B', 2));
      const waiting = claim('waiting', 'wait');
      expect(await objects(waiting)).toEqual([]);
      expect(waiting.shown).toEqual([{ token: 'first', sinceMs: expect.any(Number) as number }]);
      // Another token settles nothing.
      await stores.subscriptions.settle(id, 'another', false);
      expect(await objects(claim('again'))).toEqual([]);
      await stores.subscriptions.settle(id, 'first', false);
      expect(await objects(claim('second'))).toEqual([
        ['A', '1'],
        ['B', '2'],
      ]);
      await stores.stateObjects.push(write('A', 3));
      const redelivering = claim('third', 'redeliver');
      expect(await objects(redelivering)).toEqual([
        ['B', '2'],
        ['A', '3'],
      ]);
      expect(redelivering.shown.map((p) => p.token)).toEqual(['second']);
      await stores.subscriptions.settle(id, 'third', true);
      const after = claim('fourth');
      expect(await objects(after)).toEqual([]);
      expect(after.shown).toEqual([]);
    });

    it('a purge a pending delivery may read again keeps its tombstone from the sweep until settled', async () => {
      await newStores();
      await stores.stateObjects.push(write('A', 1));
      const { id } = await stores.subscriptions.openStateObjects(owner, undefined, patterns());
      await taken(id);
      await stores.stateObjects.purge({ sentinelName: 'S1', packageName: 'P1' }, { name: '*', type: '*' });
      expect((await stores.stateObjects.take(id, 0, signal(), claim('t'))).objects).toHaveLength(1);
      expect(await stores.stateObjects.sweep(0)).toBe(0);
      await stores.subscriptions.settle(id, 't', false);
      expect(await taken(id)).toEqual([['A', 'deleted']]);
      expect(await stores.stateObjects.sweep(0)).toBe(1);
    });

    it('the sweep removes tombstones every cursor has passed, and keeps one a cursor has not', async () => {
      await newStores();
      await stores.stateObjects.push(write('A', 1));
      const { id } = await stores.subscriptions.openStateObjects(owner, undefined, patterns());
      await taken(id);
      await stores.stateObjects.purge({ sentinelName: 'S1', packageName: 'P1' }, { name: '*', type: '*' });
      expect(await stores.stateObjects.sweep(0)).toBe(0);
      expect(await taken(id)).toEqual([['A', 'deleted']]);
      expect(await stores.stateObjects.sweep(0)).toBe(1);
    });
  });

  const message = (data: string, extra: Partial<NewMessage> = {}) =>
    messageFrom({ connectionId: other.connectionId, friendlyName: 'S1/P1' })(data, extra);
  const datas = async (id: string, limit = 0) => {
    const t = await stores.messages.take(id, limit, signal());
    return { data: t.messages.map((m) => m.data), missed: t.missed };
  };

  describe.skipIf(skip)('MessageStore', () => {
    it('a new subscription reads what is sent after it, addressed to it, in order; the cursor moves past what is not', async () => {
      await newStores();
      await stores.messages.send(message('before'));
      const { id } = await stores.subscriptions.openMessages(owner, undefined);
      await stores.messages.send(message('all'));
      await stores.messages.send(message('to a sentinel', { scope: ScopeType.Sentinel, args: '["Elsewhere"]' }));
      await Promise.all([
        stores.messages.send(
          message('to me', { scope: ScopeType.Package, args: JSON.stringify([owner.connectionId]) }),
        ),
        stores.messages.send(message('others', { scope: ScopeType.Others })),
      ]);
      expect(await datas(id, 2)).toEqual({ data: ['all', 'to me'], missed: 0 });
      expect(await datas(id)).toEqual({ data: ['others'], missed: 0 });
      expect(await datas(id)).toEqual({ data: [], missed: 0 });
    });

    it('a group joined reaches only later messages', async () => {
      await newStores();
      const { id } = await stores.subscriptions.openMessages(owner, undefined);
      await stores.messages.send(message('early', { scope: ScopeType.Group, args: '["G"]' }));
      await stores.subscriptions.openMessages(owner, id, 'G');
      await stores.messages.send(message('late', { scope: ScopeType.Group, args: '["G"]' }));
      expect(await datas(id)).toEqual({ data: ['late'], missed: 0 });
    });

    it('what the retention trimmed before a subscription read it is counted as missed', async () => {
      await newStores();
      const { id } = await stores.subscriptions.openMessages(owner, undefined);
      for (let i = 1; i <= 8; i += 1) await stores.messages.send(message(`m${i}`));
      expect(await datas(id)).toEqual({ data: ['m4', 'm5', 'm6', 'm7', 'm8'], missed: 3 });
    });

    it('a saga reply is let through only as the answer to a request its sender received, once', async () => {
      await newStores();
      const { id } = await stores.subscriptions.openMessages(owner, undefined);
      const reply = message('reply', { key: '__Response', sagaId: 'saga-1', senderConnectionId: owner.connectionId });
      await expect(stores.messages.send(reply, { sagaReplyBy: owner.connectionId })).rejects.toMatchObject({
        code: 'MessageNotAuthorized',
      });
      await stores.messages.send(message('request', { sagaId: 'saga-1' }));
      expect((await datas(id)).data).toEqual(['request']);
      expect(await stores.messages.send(reply, { sagaReplyBy: owner.connectionId })).toBeGreaterThan(0);
      await expect(stores.messages.send(reply, { sagaReplyBy: owner.connectionId })).rejects.toBeInstanceOf(HubError);
    });

    it('a claimed take leaves what it delivered pending: judged wait, nothing is taken; put back or redelivered, it is read again; written, it is consumed', async () => {
      await newStores();
      const { id } = await stores.subscriptions.openMessages(owner, undefined);
      for (const m of ['m1', 'm2', 'm3']) await stores.messages.send(message(m));
      const take = async (c: TestClaim | undefined, limit = 0) =>
        shownTo(c, await stores.messages.take(id, limit, signal(), c)).messages.map((m) => m.data);
      const first = claim('first');
      expect(await take(first, 2)).toEqual(['m1', 'm2']);
      expect(first.shown).toEqual([]);
      const waiting = claim('waiting', 'wait');
      expect(await take(waiting)).toEqual([]);
      expect(waiting.shown).toEqual([{ token: 'first', sinceMs: expect.any(Number) as number }]);
      await stores.subscriptions.settle(id, 'another', false);
      expect(await take(claim('again'))).toEqual([]);
      await stores.subscriptions.settle(id, 'first', false);
      expect(await take(claim('second'), 1)).toEqual(['m1']);
      expect(await take(claim('third', 'redeliver'))).toEqual(['m1', 'm2', 'm3']);
      await stores.subscriptions.settle(id, 'third', true);
      await stores.messages.send(message('m4'));
      const after = claim('fourth');
      expect(await take(after)).toEqual(['m4']);
      expect(after.shown).toEqual([]);
      // Read on past it: a take judging a pending delivery written, or a take with no claim.
      await stores.messages.send(message('m5'));
      expect(await take(claim('fifth', 'delivered'))).toEqual(['m5']);
      await stores.messages.send(message('m6'));
      expect(await take(undefined)).toEqual(['m6']);
      expect(await take(claim('sixth'))).toEqual([]);
    });

    it('the sweep keeps what a pending delivery may read again until it is settled', async () => {
      await newStores();
      const { id } = await stores.subscriptions.openMessages(owner, undefined);
      await stores.messages.send(message('m1'));
      await stores.messages.send(message('m2'));
      expect((await stores.messages.take(id, 0, signal(), claim('t'))).messages).toHaveLength(2);
      await stores.messages.sweep(1_000);
      await stores.subscriptions.settle(id, 't', false);
      expect((await datas(id)).data).toEqual(['m1', 'm2']);
    });

    it('a take whose client left rejects with ClientGone and consumes nothing', async () => {
      await newStores();
      const { id } = await stores.subscriptions.openMessages(owner, undefined);
      await stores.messages.send(message('kept'));
      const gone = new AbortController();
      gone.abort();
      await expect(stores.messages.take(id, 0, gone.signal)).rejects.toBeInstanceOf(ClientGone);
      expect((await datas(id)).data).toEqual(['kept']);
    });
  });

  describe.skipIf(skip)('SubscriptionStore', () => {
    it("reuses the owner's subscription, re-creates an unknown id, never hands out someone else's", async () => {
      await newStores();
      const first = await stores.subscriptions.openStateObjects(owner, undefined, patterns('A'));
      expect(first.added).toBe(true);
      expect(await stores.subscriptions.openStateObjects(owner, first.id, patterns('A'))).toEqual({
        id: first.id,
        added: false,
      });
      expect(await stores.subscriptions.openStateObjects(owner, first.id, patterns('B'))).toEqual({
        id: first.id,
        added: true,
      });
      const unknown = randomUUID();
      expect((await stores.subscriptions.openMessages(owner, unknown)).id).toBe(unknown);
      const theirs = await stores.subscriptions.openStateObjects(other, first.id, patterns('C'));
      expect(theirs.id).not.toBe(first.id);
      expect(await stores.subscriptions.findOwned(owner, first.id, 'state_objects')).toEqual({
        kind: 'state_objects',
        filters: [patterns('A'), patterns('B')],
      });
      expect(await stores.subscriptions.findOwned(other, first.id, 'state_objects')).toBeUndefined();
      expect(await stores.subscriptions.findOwned(owner, first.id, 'messages')).toBeUndefined();
    });

    it('caps the subscriptions of a credential (429) and stores nothing more', async () => {
      await newStores();
      for (let i = 0; i < MAX_PER_CREDENTIAL; i += 1) await stores.subscriptions.openMessages(owner, undefined);
      await expect(stores.subscriptions.openMessages(owner, undefined)).rejects.toMatchObject({
        code: 'TooManySubscriptions',
      });
      await expect(stores.subscriptions.openStateObjects(owner, undefined, patterns())).rejects.toMatchObject({
        code: 'TooManySubscriptions',
      });
    });

    it('a subscription removed frees its place under the cap', async () => {
      await newStores();
      const ids: string[] = [];
      for (let i = 0; i < MAX_PER_CREDENTIAL; i += 1)
        ids.push((await stores.subscriptions.openMessages(owner, undefined)).id);
      await stores.subscriptions.sweep(Date.now(), Date.now() + 60_000, ids.slice(1), 0);
      await stores.subscriptions.openMessages(owner, undefined);
      await expect(stores.subscriptions.openMessages(owner, undefined)).rejects.toMatchObject({
        code: 'TooManySubscriptions',
      });
    });

    it('the sweep removes subscriptions idle since before the cutoff, except those kept, and says whose they were', async () => {
      await newStores();
      const a = await stores.subscriptions.openMessages(owner, undefined);
      const b = await stores.subscriptions.openMessages(owner, undefined);
      const expired = await stores.subscriptions.sweep(Date.now(), Date.now() + 60_000, [b.id], 0);
      expect(expired).toEqual([{ id: a.id, kind: 'messages', credentialName: 'cred', friendlyName: 'Consumer/App' }]);
      expect(await stores.subscriptions.findOwned(owner, a.id, 'messages')).toBeUndefined();
      expect(await stores.subscriptions.findOwned(owner, b.id, 'messages')).toBeDefined();
    });

    it("removeOwned deletes the owner's subscriptions of both kinds, not someone else's nor one used since the cutoff", async () => {
      await newStores();
      const messages = await stores.subscriptions.openMessages(owner, undefined, 'G');
      const filters = await stores.subscriptions.openStateObjects(owner, undefined, patterns());
      const others = await stores.subscriptions.openMessages(other, undefined);
      const used = await stores.subscriptions.openMessages(owner, undefined);
      const cutoff = Date.now() - 60_000;
      expect(await stores.subscriptions.removeOwned(owner, [used.id], cutoff)).toBe(0);
      expect(await stores.subscriptions.removeOwned(owner, [messages.id, filters.id, others.id])).toBe(2);
      expect(await stores.subscriptions.findOwned(owner, messages.id, 'messages')).toBeUndefined();
      expect(await stores.subscriptions.findOwned(owner, filters.id, 'state_objects')).toBeUndefined();
      expect(await stores.subscriptions.findOwned(other, others.id, 'messages')).toBeDefined();
      expect(await stores.subscriptions.findOwned(owner, used.id, 'messages')).toBeDefined();
      // Their places under the cap are free again.
      await stores.subscriptions.openMessages(owner, undefined);
    });
  });
  describe.skipIf(skip)('PackageLogStore', () => {
    const entry = (
      message: string,
      extra: Partial<{ sentinelName: string; level: 'Info' | 'Warn' | 'Error'; loggedMs: number }> = {},
    ) => ({ sentinelName: 'S1', packageName: 'P1', level: 'Info' as const, message, loggedMs: 1_000, ...extra });

    it('numbers entries in order; reads the newest oldest first, follows after an Id, filters, and trims to the newest', async () => {
      await newStores();
      const ids = await Promise.all(
        ['a', 'b', 'c', 'd'].map((m, i) =>
          stores.packageLogs.write(entry(m, i === 2 ? { level: 'Error', sentinelName: 'S2' } : {})),
        ),
      );
      expect(ids).toEqual([...ids].sort((x, y) => x - y));
      const messages = (entries: { message: string }[]) => entries.map((e) => e.message);
      expect(messages(await stores.packageLogs.read({ limit: 2 }))).toEqual(['c', 'd']);
      expect(messages(await stores.packageLogs.read({ afterId: ids[0], limit: 2 }))).toEqual(['b', 'c']);
      expect(messages(await stores.packageLogs.read({ level: 'Error', limit: 10 }))).toEqual(['c']);
      expect(messages(await stores.packageLogs.read({ sentinelName: 'S1', limit: 10 }))).toEqual(['a', 'b', 'd']);
      expect(await stores.packageLogs.trim(3)).toBe(1);
      expect(messages(await stores.packageLogs.read({ limit: 10 }))).toEqual(['b', 'c', 'd']);
      expect(await stores.packageLogs.read({ afterId: ids[3], limit: 10 })).toEqual([]);
    });
  });

  describe.skipIf(skip)('DescriptorStore and HubSettingStore', () => {
    it('keeps the latest descriptor per instance, and the license as set', async () => {
      await newStores();
      const p1 = { sentinelName: 'S1', packageName: 'P1' };
      expect(await stores.descriptors.find(p1)).toBeUndefined();
      await stores.descriptors.save(p1, '{"v":1}', 1);
      await stores.descriptors.save({ sentinelName: 'S0', packageName: 'P9' }, '{"v":9}', 1);
      await stores.descriptors.save(p1, '{"v":2}', 2);
      expect(await stores.descriptors.find(p1)).toBe('{"v":2}');
      expect(await stores.descriptors.all()).toEqual([
        { sentinelName: 'S0', packageName: 'P9', descriptor: '{"v":9}' },
        { ...p1, descriptor: '{"v":2}' },
      ]);
      expect(await stores.hubSettings.license()).toBeUndefined();
      await stores.hubSettings.setLicense('{"key":"x"}');
      expect(await stores.hubSettings.license()).toBe('{"key":"x"}');
    });
  });

  describe.skipIf(skip)('ConfigurationStore', () => {
    const version = (text: string) => ({ writtenBy: 'test', reason: 'test', applied: true, text });
    /** Only what the store reads of a configuration: the groups of each package instance. */
    const withGroups = (groups: string[]) =>
      ({ sentinels: [{ name: 'S1', packages: [{ name: 'P1', groups }] }] }) as unknown as HubConfiguration;

    it('the configured groups of a package instance reach its message subscription; record, revert and applied replace them', async () => {
      await newStores();
      const pkg = { connectionId: other.connectionId, credentialName: 'other' };
      const { id } = await stores.subscriptions.openMessages(pkg, undefined);
      const sendToGroup = (g: string) =>
        stores.messages.send(message(`to ${g}`, { scope: ScopeType.Group, args: JSON.stringify([g]) }));
      await stores.configuration.applied(version('<a/>'), withGroups(['G1']), { unlessNewest: true });
      await sendToGroup('G1');
      expect((await datas(id)).data).toEqual(['to G1']);
      const recorded = await stores.configuration.record(version('<b/>'), withGroups(['G2']));
      expect(recorded).toBeGreaterThan(0);
      await sendToGroup('G1');
      await sendToGroup('G2');
      expect((await datas(id)).data).toEqual(['to G2']);
      await stores.configuration.revert(recorded, withGroups(['G1']));
      await sendToGroup('G2');
      await sendToGroup('G1');
      expect((await datas(id)).data).toEqual(['to G1']);
    });

    it("a message subscription's owner finds it with its caller's names, configured groups from 0 and joined ones from when it joined", async () => {
      await newStores();
      const pkg = { connectionId: other.connectionId, credentialName: 'other' };
      await stores.configuration.applied(version('<a/>'), withGroups(['G1']), { unlessNewest: true });
      const { id } = await stores.subscriptions.openMessages(pkg, undefined);
      await stores.messages.send(message('before'));
      await stores.subscriptions.openMessages(pkg, id, 'G2');
      await stores.subscriptions.openMessages(pkg, id, 'G1');
      const found = await stores.subscriptions.findOwned(pkg, id, 'messages');
      expect(found).toEqual({
        kind: 'messages',
        addresses: {
          connectionId: other.connectionId,
          friendlyName: 'S1/P1',
          isPackage: true,
          sentinelName: 'S1',
          packageName: 'P1',
          groups: new Map([
            ['G1', 0],
            ['G2', expect.any(Number)],
          ]),
          readMessageId: 0,
          pendingToken: null,
          pendingMs: null,
          redeliverFrom: null,
        },
      });
      expect(found?.kind === 'messages' && found.addresses.groups.get('G2')).toBeGreaterThan(0);
      expect(await stores.subscriptions.findOwned(owner, id, 'messages')).toBeUndefined();
      expect(await stores.subscriptions.findOwned(pkg, id, 'state_objects')).toBeUndefined();
    });
  });

  describe.skipIf(skip)('RepositoryStore', () => {
    // Archives of 2.5 MiB: more than one of PostgreSQL's 1 MiB chunks.
    const bytes = { 'sha-1': randomBytes(2_621_440), 'sha-2': randomBytes(2_621_440), 'sha-3': Buffer.from('zip') };
    type Sha = keyof typeof bytes;
    const pkg = (name: string, sha256: Sha) => ({
      name,
      version: '1.0',
      description: 'd',
      author: 'a',
      fileName: `${name}.zip`,
      size: bytes[sha256].length,
      sha256,
      uploadedMs: 1,
      settings: '[]',
      icon: Buffer.from([1, 2, 3]),
      xsds: '{}',
    });
    /** Stores the package as the domain does: its archive from a temp file the call may take. */
    const replace = async (name: string, sha256: Sha) => {
      const file = path.join(tempDir('hub-archive-'), 'upload.part');
      fs.writeFileSync(file, bytes[sha256]);
      try {
        await stores.repository.replace(pkg(name, sha256), file);
      } finally {
        fs.rmSync(path.dirname(file), { recursive: true, force: true });
      }
    };
    const archive = async (sha256: Sha) => {
      const stream = await stores.repository.archive(sha256);
      if (!stream) return undefined;
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    };

    it('replaces by name and keeps each archive while a package names it; renames unless taken; removes', async () => {
      await newStores();
      expect(await stores.repository.tidy()).toEqual([]);
      await replace('A', 'sha-1');
      await replace('B', 'sha-1');
      await replace('A', 'sha-2');
      // Compared with equals(): toEqual walks 2.5 MiB byte by byte.
      expect((await archive('sha-1'))?.equals(bytes['sha-1'])).toBe(true); // B still names it
      expect((await archive('sha-2'))?.equals(bytes['sha-2'])).toBe(true);
      expect(await stores.repository.find('A')).toEqual(pkg('A', 'sha-2'));
      expect(await stores.repository.rename('A', 'B')).toBe('taken');
      expect(await stores.repository.rename('Z', 'Y')).toBe('missing');
      expect(await stores.repository.rename('A', 'C')).toBe('renamed');
      expect((await stores.repository.list()).map((p) => p.name)).toEqual(['B', 'C']);
      expect((await stores.repository.fileNames()).sort()).toEqual(['B', 'B.zip', 'C', 'A.zip'].sort());
      expect(await stores.repository.remove('B')).toBe(true);
      expect(await stores.repository.remove('B')).toBe(false);
      expect(await archive('sha-1')).toBeUndefined();
      await replace('C', 'sha-3');
      expect(await archive('sha-2')).toBeUndefined();
      expect((await archive('sha-3'))?.equals(bytes['sha-3'])).toBe(true);
      expect(await stores.repository.tidy()).toEqual([]);
    });

    it('reads an archive deleted during its read to its end or to an error, never short', async () => {
      await newStores();
      await replace('A', 'sha-1');
      const stream = await stores.repository.archive('sha-1');
      expect(stream).toBeDefined();
      await stores.repository.remove('A');
      const read = async () => {
        const chunks: Buffer[] = [];
        for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
        return Buffer.concat(chunks);
      };
      // Either the whole archive or an error, never a silently short one.
      const outcome = await read().then(
        (whole) => whole.equals(bytes['sha-1']),
        (error: Error) => /deleted while it was being read/.test(error.message),
      );
      expect(outcome).toBe(true);
    });
  });

  describe.skipIf(skip)('ActivityStore and counts', () => {
    it('counts objects per instance, unread messages per caller, and the newest log of each instance', async () => {
      await newStores();
      await stores.stateObjects.push(write('A', 1));
      await stores.stateObjects.push(write('B', 1));
      await stores.subscriptions.openMessages(owner, undefined);
      await stores.messages.send(message('one'));
      await stores.packageLogs.write({
        sentinelName: 'S1',
        packageName: 'P1',
        level: 'Warn',
        message: 'last',
        loggedMs: 7,
      });
      const activity = await stores.activity.instances();
      expect(activity.stateObjects).toEqual([{ sentinelName: 'S1', packageName: 'P1', n: 2 }]);
      expect(activity.subscriptions).toEqual([
        { sentinelName: 'Consumer', packageName: 'App', queued: 1, lastActiveMs: expect.any(Number) },
      ]);
      expect(activity.lastLogs).toEqual([
        { sentinelName: 'S1', packageName: 'P1', level: 'Warn', message: 'last', loggedMs: 7 },
      ]);
      expect(await stores.counts()).toEqual({
        subscriptions: [{ kind: 'messages', n: 1 }],
        queuedMessages: 1,
        stateObjects: 2,
      });
    });
  });
});
