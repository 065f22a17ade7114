/**
 * Names from requests never reach Object.prototype: `constructor`, `__proto__`, `toString` and
 * `hasOwnProperty` as scopes, levels, setting keys and JSON keys get a clean 400/404 JSON error, and
 * nothing stored changes.
 */
import { strToU8, zipSync } from 'fflate';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { admin, call, consumer, get, hubsStoppedAfterEach, idOf, pkg, post } from './support/testHub.js';
import type { TestHub } from './support/testHub.js';
import type { StoredState } from './support/storedState.js';
import { storedStateOf } from './support/storedState.js';

const hub = hubsStoppedAfterEach();
const PROTOTYPE_NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'];

let h: TestHub;
let stored: StoredState;
beforeEach(async () => {
  h = await hub();
  stored = storedStateOf(h.dataDir);
  expect((await get(h, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'Keep', value: 1 })).status).toBe(204);
});
afterEach(() => stored.close());

/** Runs `request`, expects `status` with a JSON `{Message}` body, and that nothing stored changed. */
async function refused(
  request: () => Promise<{ status: number; text: string; headers: Headers }>,
  status: number,
  message: RegExp,
) {
  const before = stored.digest();
  const reply = await request();
  expect(reply.status, reply.text).toBe(status);
  expect(reply.headers.get('content-type')).toMatch(/application\/json/);
  expect((JSON.parse(reply.text) as { Message: string }).Message).toMatch(message);
  expect(stored.digest()).toBe(before);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
}

describe('prototype names', () => {
  it('scope=constructor (and the like) on GET and POST SendMessage is a 400 InvalidScope', async () => {
    for (const scope of PROTOTYPE_NAMES) {
      await refused(() => get(h, 'consumer/SendMessage', consumer(), { scope, key: 'K' }), 400, /Unknown scope/);
      await refused(
        () => post(h, 'consumer/SendMessage', consumer(), { Scope: { Scope: scope }, Key: 'K' }),
        400,
        /Unknown scope/,
      );
    }
  });

  it('level=constructor (and the like) on WriteLog and management logs is a 400', async () => {
    for (const level of PROTOTYPE_NAMES) {
      await refused(
        () => get(h, 'platform/WriteLog', pkg('S1', 'P1'), { message: 'm', level }),
        400,
        /'level' must be/,
      );
      await refused(() => get(h, 'management/logs', admin, { level }), 400, /'level' must be/);
    }
  });

  it('a JSON key __proto__ anywhere in a body is a 400, and the settings stay as they were', async () => {
    expect((await post(h, 'management/sentinels/S1/packages/P1/settings', admin, { Color: 'red' })).status).toBe(200);
    const settings = (await get(h, 'management/sentinels/S1/packages/P1/settings', admin)).text;
    await refused(
      () => post(h, 'management/sentinels/S1/packages/P1/settings', admin, '{"__proto__":{"polluted":"yes"}}'),
      400,
      /not valid JSON/,
    );
    await refused(
      () => post(h, 'management/sentinels/S1/packages/P1/settings', admin, "{__proto__:{polluted:'yes'}}"),
      400,
      /not valid JSON/,
    );
    expect((await get(h, 'management/sentinels/S1/packages/P1/settings', admin)).text).toBe(settings);
    await refused(
      () =>
        post(
          h,
          'platform/PushStateObject',
          pkg('S1', 'P1'),
          '{"Name":"M","Value":1,"Metadatas":{"__proto__":{"polluted":"yes"}}}',
        ),
      400,
      /not valid JSON/,
    );
    await refused(
      () =>
        post(
          h,
          'consumer/SendMessage',
          consumer(),
          '{"Scope":{"Scope":"All"},"Key":"K","Data":{"a":{"__proto__":{"polluted":1}}}}',
        ),
      400,
      /not valid JSON/,
    );
  });

  it('Metadatas keys named like prototype members are plain keys', async () => {
    const body = '{"Name":"M","Value":1,"Metadatas":{"constructor":"c","toString":"t"}}';
    expect((await post(h, 'platform/PushStateObject', pkg('S1', 'P1'), body)).status).toBe(204);
    const objects = (await get(h, 'consumer/RequestStateObjects', consumer(), { name: 'M' })).json<
      { Metadatas: Record<string, string> }[]
    >();
    expect(objects[0].Metadatas).toEqual({ constructor: 'c', toString: 't' });
  });

  it('GET packages/{p}/settings/constructor/xsd (and the like) is a 404 JSON error', async () => {
    const zip = Buffer.from(
      zipSync({
        'manifest.json': strToU8(
          JSON.stringify({ Name: 'Thermo', Version: '1', Settings: [{ Key: 'Layout', Type: 'Xml', Xsd: 'l.xsd' }] }),
        ),
        'l.xsd': strToU8('<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"/>'),
      }),
    );
    const form = new FormData();
    form.append('package', new Blob([new Uint8Array(zip)]), 'thermo.zip');
    const uploaded = await fetch(
      `${h.url}/rest/management/upload-package?SentinelName=Management&PackageName=T&AccessKey=${admin.AccessKey}`,
      { method: 'POST', body: form },
    );
    expect(uploaded.status).toBe(200);
    for (const key of PROTOTYPE_NAMES) {
      await refused(() => get(h, `management/packages/Thermo/settings/${key}/xsd`, admin), 404, /has no XSD/);
    }
    expect((await get(h, 'management/packages/Thermo/settings/Layout/xsd', admin)).status).toBe(200);
  });
});

describe('one rule for names from requests', () => {
  it('a StateObject with a name at the length limit is requested, subscribed to and purged by that exact name', async () => {
    const longest = 'n'.repeat(1024);
    const sibling = `${'n'.repeat(1023)}m`;
    for (const name of [longest, sibling])
      expect((await post(h, 'platform/PushStateObject', pkg('S1', 'P1'), { Name: name, Value: 1 })).status).toBe(204);
    const found = (await get(h, 'consumer/RequestStateObjects', consumer(), { name: longest })).json<
      { Name: string }[]
    >();
    expect(found.map((o) => o.Name)).toEqual([longest]);
    const subscription = idOf(await get(h, 'consumer/SubscribeToStateObjects', consumer(), { name: longest }));
    expect(
      (await get(h, 'consumer/GetStateObjects', consumer(), { subscriptionId: subscription, timeout: 0 })).status,
    ).toBe(200);
    // One past the limit is refused as a filter as it is as a name, and deletes nothing.
    await refused(
      () => get(h, 'platform/PurgeStateObjects', pkg('S1', 'P1'), { name: `${longest}n` }),
      400,
      /at most 1024/,
    );
    expect((await get(h, 'platform/PurgeStateObjects', pkg('S1', 'P1'), { name: longest })).status).toBe(204);
    const left = (await get(h, 'consumer/RequestStateObjects', consumer(), { name: 'n*' })).json<{ Name: string }[]>();
    expect(left.map((o) => o.Name)).toEqual([sibling]);
  });

  it('a NUL in a filter is a 400: PurgeStateObjects?name=NulBase%00zz deletes nothing', async () => {
    expect((await get(h, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'NulBase', value: 1 })).status).toBe(204);
    await refused(
      () => get(h, 'platform/PurgeStateObjects', pkg('S1', 'P1'), { name: 'NulBase\u0000zz' }),
      400,
      /control characters/,
    );
    await refused(
      () => get(h, 'consumer/RequestStateObjects', consumer(), { name: 'Keep\u0000x' }),
      400,
      /control characters/,
    );
    const names = (await get(h, 'consumer/RequestStateObjects', consumer()))
      .json<{ Name: string }[]>()
      .map((o) => o.Name);
    expect(names.sort()).toEqual(['Keep', 'NulBase']);
  });

  it('names with control characters or over the length limit are refused wherever they enter', async () => {
    const bad = ['a\u0000b', 'line\nbreak', 'x'.repeat(1025)];
    for (const name of bad) {
      await refused(
        () => get(h, 'platform/PushStateObject', pkg('S1', 'P1'), { name, value: 1 }),
        400,
        /parameter 'name'/,
      );
      await refused(() => post(h, 'platform/PushStateObject', pkg('S1', 'P1'), { Name: name, Value: 1 }), 400, /Name/);
      await refused(
        () => get(h, 'consumer/SendMessage', consumer(), { scope: 'All', key: name }),
        400,
        /parameter 'key'/,
      );
      await refused(
        () => post(h, 'consumer/SendMessage', consumer(), { Scope: { Scope: 'All' }, Key: name }),
        400,
        /Key/,
      );
      await refused(
        () => get(h, 'consumer/SendMessage', consumer(), { scope: 'Sentinel', args: name, key: 'K' }),
        400,
        /'args'/,
      );
      await refused(
        () => get(h, 'consumer/SubscribeToMessageGroup', consumer(), { group: name }),
        400,
        /parameter 'group'/,
      );
      await refused(
        () => get(h, 'consumer/SubscribeToStateObjects', consumer(), { sentinel: name }),
        400,
        /filter 'sentinel'/,
      );
    }
    await refused(
      () => get(h, 'consumer/RequestStateObjects', consumer(), { name: '*'.repeat(1025) }),
      400,
      /at most 1024/,
    );
    await refused(
      () => get(h, 'consumer/SubscribeToStateObjects', consumer(), { name: `*${'a'.repeat(33)}` }),
      400,
      /at most 32 characters other than '\*' after its first '\*'/,
    );
    await refused(
      () => get(h, 'platform/PurgeStateObjects', pkg('S1', 'P1'), { name: `K*${'e*'.repeat(33)}` }),
      400,
      /at most 32 characters/,
    );
    expect(
      (await get(h, 'consumer/RequestStateObjects', consumer(), { name: `${'K'.repeat(200)}*${'e'.repeat(32)}` }))
        .status,
    ).toBe(200);
    await refused(
      () => get(h, 'consumer/SubscribeToMessage', consumer('App\u0000x')),
      400,
      /PackageName must not contain control characters/,
    );
    await refused(
      () => get(h, 'consumer/SendMessage', consumer('x'.repeat(257)), { scope: 'All', key: 'K' }),
      400,
      /PackageName must be at most 256/,
    );
    await refused(
      () => get(h, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'T', value: 1, type: 't'.repeat(257) }),
      400,
      /parameter 'type' must be at most 256/,
    );
    await refused(
      () =>
        call(h, 'POST', 'platform/PushStateObject', pkg('S1', 'P1'), {
          body: { Name: 'M', Value: 1, Metadatas: { 'a\u0000': 'x' } },
        }),
      400,
      /Metadatas/,
    );
  });
});
