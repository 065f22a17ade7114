import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfigurationFile } from '../src/config/xmlFile.js';
import {
  admin,
  call,
  consumer,
  get,
  pkg,
  post,
  startTestHub,
  tempDir,
  hubsStoppedAfterEach,
  configFileText,
} from './support/testHub.js';
import type { TestHub } from './support/testHub.js';

type Hub = TestHub;
const hub = hubsStoppedAfterEach();

const del = (h: Hub, action: string) => call(h, 'DELETE', action, admin);
const fileConfigOf = (h: Hub) => parseConfigurationFile(configFileText(h)).config;

describe('server and license', () => {
  it("reports the version as a JSON string: package.json's", async () => {
    const h = await hub();
    const reply = await get(h, 'management/server/version', admin);
    const { version } = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(reply.json()).toBe(version);
  });

  it('starts with the Community license and enforces posted limits with 409', async () => {
    const h = await hub();
    expect((await get(h, 'management/license', admin)).json()).toEqual({
      Licensee: 'Community',
      Edition: 'Community',
      ExpirationDate: null,
      MaxSentinels: null,
      MaxPackageInstances: null,
      IsExpired: false,
    });
    const posted = await post(h, 'management/license', admin, {
      Licensee: 'Home',
      Edition: 'Pro',
      ExpirationDate: '2030-01-01T00:00:00Z',
      MaxSentinels: 2,
      MaxPackageInstances: 3,
    });
    expect(posted.json()).toMatchObject({ Licensee: 'Home', MaxSentinels: 2, IsExpired: false });
    const third = await post(h, 'management/sentinels', admin, { Name: 'S3', Credential: 'Dev' });
    expect(third.status).toBe(409);
    expect(third.json<{ Message: string }>().Message).toMatch(/MaxSentinels/);
    const fourthInstance = await post(h, 'management/sentinels/S2/packages', admin, { Name: 'P9' });
    expect(fourthInstance.status).toBe(409);
    expect(fourthInstance.json<{ Message: string }>().Message).toMatch(/MaxPackageInstances/);
    expect((await post(h, 'management/license', admin, { Licensee: '', Edition: 'x' })).status).toBe(400);
  });
});

describe('sentinels and package instances', () => {
  it('adds, modifies, lists and deletes sentinels, rewriting the file', async () => {
    const h = await hub();
    expect((await post(h, 'management/sentinels', admin, { Name: 'S3', Credential: 'Dev' })).json()).toEqual({
      Name: 'S3',
      Credential: 'Dev',
      Packages: [],
    });
    expect((await post(h, 'management/sentinels', admin, { Name: 'S3', Credential: 'Other' })).json()).toMatchObject({
      Credential: 'Other',
    });
    expect((await get(h, 'management/sentinels', admin)).json<{ Name: string }[]>().map((s) => s.Name)).toEqual([
      'S1',
      'S2',
      'S3',
    ]);
    expect(fileConfigOf(h).sentinels.map((s) => s.name)).toEqual(['S1', 'S2', 'S3']);
    expect((await del(h, 'management/sentinels/S3')).status).toBe(204);
    expect((await del(h, 'management/sentinels/S3')).status).toBe(404);
    expect(fileConfigOf(h).sentinels.map((s) => s.name)).toEqual(['S1', 'S2']);
    const unknownCredential = await post(h, 'management/sentinels', admin, { Name: 'S4', Credential: 'Nope' });
    expect(unknownCredential.status).toBe(400);
    expect(unknownCredential.json<{ MessageDetail: string }>().MessageDetail).toMatch(/unknown credential "Nope"/);
  });

  it('loses none of many concurrent management writes', async () => {
    const h = await hub();
    const replies = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        post(h, 'management/sentinels', admin, { Name: `C${i}`, Credential: 'Dev' }),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(12).fill(200));
    const names = (await get(h, 'management/sentinels', admin)).json<{ Name: string }[]>().map((s) => s.Name);
    expect(names).toEqual(['S1', 'S2', ...Array.from({ length: 12 }, (_, i) => `C${i}`)]);
    expect(fileConfigOf(h).sentinels).toHaveLength(14);
    // Started in the same turn, without HTTP in between.
    await Promise.all(Array.from({ length: 5 }, (_, i) => h.services.management.sentinels.upsert(`D${i}`, 'Dev')));
    expect(h.services.configuration.current.sentinels).toHaveLength(19);
    expect(fileConfigOf(h).sentinels).toHaveLength(19);
  });

  it('adds an instance with the defaults of the specification and modifies it', async () => {
    const h = await hub();
    const added = await post(h, 'management/sentinels/S1/packages', admin, { Name: 'P3' });
    expect(added.json()).toEqual({
      Sentinel: 'S1',
      Name: 'P3',
      PackageFile: null,
      Enable: true,
      Credential: 'Dev',
      AutoStart: true,
      Groups: [],
      IsVirtual: true,
      PackageFileMissing: false,
    });
    const modified = await post(h, 'management/sentinels/S1/packages', admin, {
      Name: 'P3',
      PackageFile: 'p3.zip',
      Enable: false,
      Credential: 'Other',
      AutoStart: false,
    });
    expect(modified.json()).toEqual({
      Sentinel: 'S1',
      Name: 'P3',
      PackageFile: 'p3.zip',
      Enable: false,
      Credential: 'Other',
      AutoStart: false,
      Groups: [],
      IsVirtual: false,
      PackageFileMissing: true,
    });
    expect((await get(h, 'management/sentinels/S1/packages/P3', admin)).json()).toEqual(modified.json());
    expect(
      (await get(h, 'management/sentinels/S1/packages', admin)).json<{ Name: string }[]>().map((p) => p.Name),
    ).toEqual(['P1', 'P2', 'P3']);
    expect((await del(h, 'management/sentinels/S1/packages/P3')).status).toBe(204);
    expect((await get(h, 'management/sentinels/S1/packages/P3', admin)).status).toBe(404);
    expect((await get(h, 'management/sentinels/S9/packages', admin)).status).toBe(404);
  });

  it('a new instance authenticates with the sentinel’s credential at once; disabling locks it out', async () => {
    const h = await hub();
    await post(h, 'management/sentinels/S1/packages', admin, { Name: 'P3' });
    expect((await get(h, 'platform/CheckAccess', pkg('S1', 'P3'))).status).toBe(200);
    await post(h, 'management/sentinels/S1/packages', admin, { Name: 'P3', Enable: false });
    expect((await get(h, 'platform/CheckAccess', pkg('S1', 'P3'))).status).toBe(403);
  });

  it('reads and replaces groups, settings and recovery options', async () => {
    const h = await hub();
    const base = 'management/sentinels/S1/packages/P2';
    expect((await get(h, `${base}/groups`, admin)).json()).toEqual([]);
    expect((await post(h, `${base}/groups`, admin, ['Kitchen', 'Lights'])).json()).toEqual(['Kitchen', 'Lights']);
    expect((await get(h, `${base}`, admin)).json()).toMatchObject({ Groups: ['Kitchen', 'Lights'] });
    expect((await post(h, `${base}/settings`, admin, { A: 'x', B: 2, C: [1, 2], D: { e: true } })).json()).toEqual({
      A: 'x',
      B: '2',
      C: '[1,2]',
      D: '{"e":true}',
    });
    expect((await get(h, `${base}/settings`, admin)).json()).toEqual({ A: 'x', B: '2', C: '[1,2]', D: '{"e":true}' });
    expect(fileConfigOf(h).sentinels[0].packages[1].settings).toContainEqual({
      key: 'C',
      kind: 'content',
      value: '[1,2]',
    });
    const global = {
      RestartAfterFailure: true,
      NumberOfRetry: 3,
      ResetCounterAfterMinutes: 15,
      RestartPackageAfterSeconds: 30,
    };
    expect((await get(h, `${base}/recoveryoptions`, admin)).json()).toEqual(global);
    const own = {
      RestartAfterFailure: false,
      NumberOfRetry: 1,
      ResetCounterAfterMinutes: 2,
      RestartPackageAfterSeconds: 3,
    };
    expect((await post(h, `${base}/recoveryoptions`, admin, own)).json()).toEqual(own);
    expect((await get(h, `${base}/recoveryoptions`, admin)).json()).toEqual(own);
    const newGlobal = { ...global, NumberOfRetry: 9 };
    expect((await post(h, 'management/configuration/recoveryoptions', admin, newGlobal)).json()).toEqual(newGlobal);
    expect((await get(h, 'management/sentinels/S1/packages/P1/recoveryoptions', admin)).json()).toEqual(newGlobal);
    expect((await post(h, `${base}/groups`, admin, 'Kitchen')).status).toBe(400);
    expect((await post(h, `${base}/recoveryoptions`, admin, { NumberOfRetry: -1 })).status).toBe(400);
  });

  it('validates names in paths and bodies', async () => {
    const h = await hub();
    expect((await get(h, 'management/sentinels/S1%2FX/packages', admin)).status).toBe(400);
    expect((await get(h, `management/sentinels/${'x'.repeat(200)}/packages`, admin)).status).toBe(400);
    expect((await get(h, 'management/sentinels/Nope/packages/P1', admin)).status).toBe(404);
    const bad = await post(h, 'management/sentinels', admin, { Name: 'a/b', Credential: 'Dev' });
    expect(bad.status).toBe(400);
    expect(bad.json<{ Message: string }>().Message).toMatch(/Name must not contain "\/"/);
    expect((await post(h, 'management/sentinels', admin, { Name: 'x\u0001', Credential: 'Dev' })).status).toBe(400);
    const missing = await post(h, 'management/sentinels', admin, { Credential: 'Dev' });
    expect(missing.status).toBe(400);
    expect(missing.json<{ Message: string }>().Message).toBe('The body is not valid: Name is required.');
    // Said as the hub says things, not in the validation library's words.
    const long = await post(h, 'management/credentials', admin, { Name: 'Long', AccessKey: 'k'.repeat(257) });
    expect(long.json<{ Message: string }>().Message).toBe(
      'The body is not valid: AccessKey must be at most 256 characters.',
    );
    const wrongType = await post(h, 'management/credentials', admin, { Name: 'Typed', AccessKey: 12345678 });
    expect(wrongType.json<{ Message: string }>().Message).toBe('The body is not valid: AccessKey must be a string.');
  });
});

describe('credentials', () => {
  it('lists without keys unless asked, adds, and hides keys in answers', async () => {
    const h = await hub();
    const list = (await get(h, 'management/credentials', admin)).json<Record<string, unknown>[]>();
    expect(list.map((c) => c.Name)).toEqual(['Admin', 'Dev', 'Other', 'Disabled']);
    expect(list.every((c) => !('AccessKey' in c))).toBe(true);
    const withKeys = (await get(h, 'management/credentials', admin, { includeAccessKeys: 'true' })).json<
      { AccessKey: string }[]
    >();
    expect(withKeys[1].AccessKey).toBe('dev-key-0001');
    const added = await post(h, 'management/credentials', admin, {
      Name: 'New',
      AccessKey: 'new-key-0001',
      EnableManagementAPI: true,
    });
    expect(added.json()).toEqual({
      Name: 'New',
      Enable: true,
      EnableControlHub: false,
      EnableManagementAPI: true,
      EnableDeveloperAccess: false,
    });
    expect((await get(h, 'management/CheckAccess', { ...admin, AccessKey: 'new-key-0001' })).status).toBe(200);
  });

  it('a key rotated through the API locks out the old key at once', async () => {
    const h = await hub();
    expect((await get(h, 'consumer/CheckAccess', consumer())).status).toBe(200);
    await post(h, 'management/credentials', admin, { Name: 'Dev', AccessKey: 'rotated-key-0001' });
    expect((await get(h, 'consumer/CheckAccess', consumer())).status).toBe(403);
    expect((await get(h, 'platform/CheckAccess', pkg('S1', 'P1'))).status).toBe(403);
    expect((await get(h, 'platform/CheckAccess', pkg('S1', 'P1', 'rotated-key-0001'))).status).toBe(200);
    await post(h, 'management/credentials', admin, { Name: 'Dev', AccessKey: 'rotated-key-0001', Enable: false });
    expect((await get(h, 'consumer/CheckAccess', consumer('App', 'rotated-key-0001'))).status).toBe(403);
  });

  it('refuses deleting a credential in use and removing the last management credential (409)', async () => {
    const h = await hub();
    const inUse = await del(h, 'management/credentials/Dev');
    expect(inUse.status).toBe(409);
    expect(inUse.json<{ Message: string }>().Message).toMatch(/sentinel 'S1'/);
    const last = await del(h, 'management/credentials/Admin');
    expect(last.status).toBe(409);
    expect(
      (
        await post(h, 'management/credentials', admin, {
          Name: 'Admin',
          AccessKey: 'admin-key-0001',
          EnableManagementAPI: false,
        })
      ).status,
    ).toBe(409);
    expect((await del(h, 'management/credentials/Disabled')).status).toBe(204);
    expect((await del(h, 'management/credentials/Disabled')).status).toBe(404);
    expect((await get(h, 'management/CheckAccess', admin)).status).toBe(200);
  });

  it('reads and sets authorizations, which apply on the next request', async () => {
    const h = await hub();
    expect((await get(h, 'management/credentials/Dev/authorizations', admin)).json()).toEqual({
      StateObjects: { DefaultAuthorization: 'Allow', Authorizations: [] },
      Messages: { DefaultAuthorization: 'Allow', Authorizations: [] },
      Groups: { DefaultAuthorization: 'Allow', Authorizations: [] },
    });
    const rules = {
      StateObjects: {
        DefaultAuthorization: 'Allow',
        Authorizations: [{ Id: 1, Authorization: 'Deny', Name: 'Secret' }],
      },
      Messages: { DefaultAuthorization: 'Deny', Authorizations: [] },
    };
    const set = await post(h, 'management/credentials/Dev/authorizations', admin, rules);
    expect(set.json()).toEqual({
      StateObjects: {
        DefaultAuthorization: 'Allow',
        Authorizations: [{ Id: '1', Authorization: 'Deny', SentinelName: '*', PackageName: '*', Name: 'Secret' }],
      },
      Messages: { DefaultAuthorization: 'Deny', Authorizations: [] },
      Groups: { DefaultAuthorization: 'Allow', Authorizations: [] },
    });
    expect((await get(h, 'consumer/SendMessage', consumer(), { scope: 'All', key: 'K' })).status).toBe(403);
    await get(h, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'Secret', value: 1 });
    expect((await get(h, 'consumer/RequestStateObjects', consumer())).json()).toEqual([]);
    expect(
      (
        await post(h, 'management/credentials/Dev/authorizations', admin, {
          Messages: { DefaultAuthorization: 'Maybe' },
        })
      ).status,
    ).toBe(400);
    expect((await get(h, 'management/credentials/Nope/authorizations', admin)).status).toBe(404);
  });
});

describe('configuration file', () => {
  it('GET, edit, POST, reload: the change reaches authentication and GetSettings', async () => {
    const h = await hub();
    const xml = (await get(h, 'management/configuration', admin)).text;
    const edited = xml
      .replace(/<\/credentials>/, '<credential name="Added" accessKey="added-key-0001"/></credentials>')
      .replace(
        /(<sentinel name="S1"[\s\S]*?<package name="P2"[^>]*?)\/>/,
        '$1><settings><setting key="Mode" value="eco"/></settings></package>',
      );
    expect(edited).toContain('added-key-0001');
    expect(edited).toContain('eco');
    expect((await post(h, 'management/configuration', admin, edited, 'application/xml')).status).toBe(204);
    // Saved, not applied.
    expect((await get(h, 'consumer/CheckAccess', consumer('App', 'added-key-0001'))).status).toBe(403);
    expect((await get(h, 'management/configuration/reload', admin)).status).toBe(200);
    expect((await get(h, 'consumer/CheckAccess', consumer('App', 'added-key-0001'))).status).toBe(200);
    expect((await get(h, 'platform/GetSettings', pkg('S1', 'P2'))).json()).toEqual({ Mode: 'eco' });
  });

  it('refuses invalid XML with 400 naming the fault and leaves file and database unchanged', async () => {
    const h = await hub();
    const before = configFileText(h);
    const notXml = await post(h, 'management/configuration', admin, '<hub><sentinels></hub>', 'application/xml');
    expect(notXml.status).toBe(400);
    expect(notXml.json<{ MessageDetail: string }>().MessageDetail).toMatch(/not well-formed XML at line/);
    const badRule = await post(
      h,
      'management/configuration',
      admin,
      before.replace('credential="Dev"', 'credential="Ghost"'),
      'application/xml',
    );
    expect(badRule.status).toBe(400);
    expect(badRule.json<{ MessageDetail: string }>().MessageDetail).toMatch(
      /<sentinel name="S1"> attribute "credential": unknown credential "Ghost"/,
    );
    expect(configFileText(h)).toBe(before);
    expect((await post(h, 'management/configuration', admin, '', 'application/xml')).status).toBe(400);
    expect((await get(h, 'management/configuration/reload', admin)).status).toBe(200);
    expect((await get(h, 'management/sentinels', admin)).json<{ Credential: string }[]>()[0].Credential).toBe('Dev');
  });

  it('a reload of a file made invalid behind the hub’s back changes nothing', async () => {
    const h = await hub();
    fs.writeFileSync(h.options.configPath, '<hub><credentials><credential name="A"/></credentials></hub>');
    const reload = await get(h, 'management/configuration/reload', admin);
    expect(reload.status).toBe(400);
    expect(reload.json<{ MessageDetail: string }>().MessageDetail).toMatch(/accessKey/);
    expect((await get(h, 'management/CheckAccess', admin)).status).toBe(200);
    const sqlite = new Database(path.join(h.dataDir, 'hub.db'), { readonly: true });
    expect(sqlite.prepare('select count(*) as n from configuration_versions').get()).toEqual({ n: 1 });
    sqlite.close();
  });

  it('keeps management changes across a restart', async () => {
    const dataDir = tempDir();
    const first = await startTestHub({ dataDir });
    await post(first, 'management/sentinels', admin, { Name: 'S3', Credential: 'Other' });
    await post(first, 'management/sentinels/S3/packages', admin, { Name: 'Lamp' });
    await post(first, 'management/sentinels/S3/packages/Lamp/settings', admin, { Color: 'blue' });
    await first.stop();
    const second = await hub({ dataDir });
    expect((await get(second, 'platform/GetSettings', pkg('S3', 'Lamp', 'other-key-0001'))).json()).toEqual({
      Color: 'blue',
    });
  });
});
