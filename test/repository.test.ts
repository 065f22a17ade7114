import { strToU8, zipSync } from 'fflate';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { packageZip, uploadPackages } from './support/packages.js';
import { admin, call, get, post, startTestHub } from './support/testHub.js';

type Hub = Awaited<ReturnType<typeof startTestHub>>;
const cleanups: (() => Promise<void>)[] = [];
async function hub(options: Parameters<typeof startTestHub>[0] = {}): Promise<Hub> {
  const h = await startTestHub(options);
  cleanups.push(() => h.stop());
  return h;
}
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c()));
});

const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from('fake-png-body'),
]);
const XSD = '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="layout"/></xs:schema>';

const thermo = (version = '1.0.0') =>
  packageZip(
    {
      Name: 'Thermo',
      Version: version,
      Description: 'Reads temperatures',
      Author: 'Home',
      Icon: 'icon.png',
      Settings: [
        { Key: 'Interval', Type: 'Int32', Description: 'Seconds between readings', DefaultValue: 60 },
        { Key: 'Layout', Type: 'Xml', Xsd: 'schemas/layout.xsd' },
      ],
    },
    { 'icon.png': PNG, 'schemas/layout.xsd': strToU8(XSD), 'bin/thermo.js': strToU8('console.log(1)') },
  );

const repositoryFiles = (h: Hub) => fs.readdirSync(path.join(h.dataDir, 'repository'));

describe('upload and read back', () => {
  it('stores an uploaded package: list, detail, icon bytes and XSD', async () => {
    const h = await hub();
    const data = thermo();
    const reply = await uploadPackages(h, [{ name: 'thermo-1.0.0.zip', data }]);
    expect(reply.status, reply.text).toBe(200);
    const [entry] = reply.json<Record<string, unknown>[]>();
    expect(entry).toMatchObject({
      Name: 'Thermo',
      Version: '1.0.0',
      Description: 'Reads temperatures',
      Author: 'Home',
      FileName: 'thermo-1.0.0.zip',
      Size: data.length,
      HasIcon: true,
      Settings: [
        { Key: 'Interval', Type: 'Int32', Description: 'Seconds between readings', DefaultValue: 60, HasXsd: false },
        { Key: 'Layout', Type: 'Xml', Description: '', DefaultValue: null, HasXsd: true },
      ],
    });
    expect(entry.Sha256).toMatch(/^[0-9a-f]{64}$/);
    expect((await get(h, 'management/packages', admin)).json<{ Name: string }[]>().map((p) => p.Name)).toEqual([
      'Thermo',
    ]);
    expect((await get(h, 'management/packages/Thermo', admin)).json()).toEqual(entry);
    const icon = await fetch(
      `${h.url}/rest/management/packages/Thermo/icon?SentinelName=Management&PackageName=T&AccessKey=${admin.AccessKey}`,
    );
    expect(icon.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await icon.arrayBuffer()).equals(PNG)).toBe(true);
    const xsd = await get(h, 'management/packages/Thermo/settings/Layout/xsd', admin);
    expect(xsd.headers.get('content-type')).toMatch(/application\/xml/);
    expect(xsd.text).toBe(XSD);
    expect((await get(h, 'management/packages/Thermo/settings/Interval/xsd', admin)).status).toBe(404);
    expect(repositoryFiles(h)).toEqual([`${entry.Sha256 as string}.zip`]);
    const archive = await fetch(
      `${h.url}/rest/management/packages/Thermo/archive?SentinelName=Management&PackageName=T&AccessKey=${admin.AccessKey}`,
    );
    expect(archive.status).toBe(200);
    expect(archive.headers.get('content-type')).toBe('application/zip');
    expect(archive.headers.get('content-length')).toBe(String(data.length));
    expect(archive.headers.get('content-disposition')).toBe('attachment; filename="thermo-1.0.0.zip"');
    expect(Buffer.from(await archive.arrayBuffer()).equals(data)).toBe(true);
    expect((await get(h, 'management/packages/Nothing/archive', admin)).status).toBe(404);
  });

  it('replaces a package by a new version and removes the old archive', async () => {
    const h = await hub();
    await uploadPackages(h, [{ name: 'thermo.zip', data: thermo('1.0.0') }]);
    const reply = await uploadPackages(h, [{ name: 'thermo.zip', data: thermo('2.0.0') }]);
    const [entry] = reply.json<{ Version: string; Sha256: string }[]>();
    expect(entry.Version).toBe('2.0.0');
    expect((await get(h, 'management/packages', admin)).json<{ Version: string }[]>().map((p) => p.Version)).toEqual([
      '2.0.0',
    ]);
    expect(repositoryFiles(h)).toEqual([`${entry.Sha256}.zip`]);
  });

  it('keeps the archive when the same package is uploaded again (the replaced entry named the same file)', async () => {
    const h = await hub();
    const data = thermo('1.0.0');
    const [first] = (await uploadPackages(h, [{ name: 'thermo.zip', data }])).json<{ Sha256: string }[]>();
    const again = await uploadPackages(h, [{ name: 'thermo-again.zip', data }]);
    expect(again.json<{ FileName: string; Sha256: string }[]>()).toMatchObject([
      { FileName: 'thermo-again.zip', Sha256: first.Sha256 },
    ]);
    expect(repositoryFiles(h)).toEqual([`${first.Sha256}.zip`]);
    const icon = await fetch(
      `${h.url}/rest/management/packages/Thermo/icon?SentinelName=Management&PackageName=T&AccessKey=${admin.AccessKey}`,
    );
    expect(icon.status).toBe(200);
  });

  it('renames (409 onto a taken name) and deletes; an instance naming it reports the file missing', async () => {
    const h = await hub();
    await uploadPackages(h, [
      { name: 'thermo.zip', data: thermo() },
      { name: 'other.zip', data: packageZip({ Name: 'Other', Version: '1' }) },
    ]);
    await post(h, 'management/sentinels/S1/packages', admin, { Name: 'P3', PackageFile: 'Thermo' });
    expect((await get(h, 'management/sentinels/S1/packages/P3', admin)).json()).toMatchObject({
      PackageFileMissing: false,
    });
    expect((await post(h, 'management/packages/Thermo', admin, { newName: 'Other' })).status).toBe(409);
    const renamed = await post(h, 'management/packages/Thermo', admin, { newName: 'Thermometer' });
    expect(renamed.json()).toMatchObject({ Name: 'Thermometer', Version: '1.0.0' });
    expect((await get(h, 'management/packages/Thermo', admin)).status).toBe(404);
    expect((await call(h, 'DELETE', 'management/packages/Thermometer', admin)).status).toBe(204);
    expect((await call(h, 'DELETE', 'management/packages/Thermometer', admin)).status).toBe(404);
    expect(repositoryFiles(h)).toHaveLength(1);
    expect((await get(h, 'management/sentinels/S1/packages/P3', admin)).json()).toMatchObject({
      PackageFile: 'Thermo',
      PackageFileMissing: true,
    });
    expect((await get(h, 'management/packages/Other/icon', admin)).status).toBe(404);
  });
});

describe('download', () => {
  async function fileServer(routes: Record<string, (res: http.ServerResponse) => void>): Promise<string> {
    const server = http.createServer((req, res) => {
      const route = routes[req.url ?? ''];
      if (route) route(res);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it('downloads a package from a URL, following a redirect', async () => {
    const h = await hub();
    const data = thermo();
    const base = await fileServer({
      '/thermo.zip': (res) => res.writeHead(200, { 'Content-Type': 'application/zip' }).end(data),
      '/latest': (res) => res.writeHead(302, { Location: '/thermo.zip' }).end(),
    });
    const reply = await post(h, 'management/download-package', admin, { url: `${base}/latest` });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json()).toMatchObject({ Name: 'Thermo', FileName: 'thermo.zip', Size: data.length });
  });

  it('says why a download failed and stores nothing', async () => {
    const h = await hub({ options: { maxPackageBytes: 4096, downloadTimeoutMs: 1000 } });
    const base = await fileServer({
      '/big.zip': (res) => res.writeHead(200).end(Buffer.alloc(10_000)),
      '/text': (res) => res.writeHead(200).end('not a zip'),
      '/loop': (res) => res.writeHead(302, { Location: '/loop' }).end(),
      '/slow': () => undefined,
    });
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const cases: [string, number, RegExp][] = [
      ['ftp://example.org/p.zip', 400, /Only http and https/],
      ['not a url', 400, /not a URL/],
      [`http://127.0.0.1:${closedPort}/p.zip`, 400, /could not be downloaded.*ECONNREFUSED/],
      [`${base}/missing.zip`, 400, /answered 404/],
      [`${base}/big.zip`, 413, /larger than 4096/],
      [`${base}/text`, 400, /not a readable zip/],
      [`${base}/loop`, 400, /More than 5 redirects/],
      [`${base}/slow`, 400, /no answer within 1000 ms/],
    ];
    for (const [url, status, message] of cases) {
      const reply = await post(h, 'management/download-package', admin, { url });
      expect(reply.status, `${url}: ${reply.text}`).toBe(status);
      expect(reply.json<{ Message: string }>().Message).toMatch(message);
    }
    expect((await get(h, 'management/packages', admin)).json()).toEqual([]);
    expect(repositoryFiles(h)).toEqual([]);
    expect(fs.readdirSync(path.join(h.dataDir, 'tmp'))).toEqual([]);
  });
});

describe('refusals', () => {
  it.each([
    ['not a zip', () => Buffer.from('hello'), 400, /not a readable zip/],
    ['a zip without manifest', () => Buffer.from(zipSync({ 'readme.txt': strToU8('x') })), 400, /no manifest.json/],
    [
      'a manifest that is not JSON',
      () => Buffer.from(zipSync({ 'manifest.json': strToU8('{nope') })),
      400,
      /manifest.json is not JSON/,
    ],
    ['a manifest without Version', () => packageZip({ Name: 'X' }), 400, /manifest.json Version/],
    ['a bad package name', () => packageZip({ Name: 'a/b', Version: '1' }), 400, /manifest.json Name must not contain/],
    [
      'a missing icon',
      () => packageZip({ Name: 'X', Version: '1', Icon: 'icon.png' }),
      400,
      /icon 'icon.png' named by the manifest is not in the archive/,
    ],
    [
      'an icon that is not PNG',
      () => packageZip({ Name: 'X', Version: '1', Icon: 'i.png' }, { 'i.png': strToU8('GIF89a') }),
      400,
      /not a PNG/,
    ],
    [
      'an XSD for a non-XML setting',
      () =>
        packageZip(
          { Name: 'X', Version: '1', Settings: [{ Key: 'K', Type: 'String', Xsd: 'k.xsd' }] },
          { 'k.xsd': strToU8(XSD) },
        ),
      400,
      /Xsd may name an Xsd only/,
    ],
    [
      'a path traversal entry',
      () => packageZip({ Name: 'X', Version: '1' }, { '../evil.sh': strToU8('rm -rf /') }),
      400,
      /outside the package folder|invalid relative path/,
    ],
    [
      'a zip bomb',
      () => packageZip({ Name: 'X', Version: '1' }, { 'zeros.bin': new Uint8Array(3 * 1024 * 1024) }),
      400,
      /unpack to more than/,
    ],
    [
      'too many entries',
      () =>
        packageZip(
          { Name: 'X', Version: '1' },
          Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`f${i}`, strToU8('x')])),
        ),
      400,
      /more than 1000 entries/,
    ],
    [
      'an oversized upload',
      () => Buffer.concat([packageZip({ Name: 'X', Version: '1' }), Buffer.alloc(300 * 1024)]),
      413,
      /./,
    ],
  ])('refuses %s with a clear 4xx and stores nothing', async (_what, make, status, message) => {
    const h = await hub({ options: { maxPackageBytes: 256 * 1024, maxPackageUnpackedBytes: 1024 * 1024 } });
    const reply = await uploadPackages(h, [{ name: 'p.zip', data: make() }]);
    expect(reply.status, reply.text).toBe(status);
    expect(reply.json<{ Message: string }>().Message).toMatch(message);
    expect((await get(h, 'management/packages', admin)).json()).toEqual([]);
    expect(repositoryFiles(h)).toEqual([]);
    expect(fs.readdirSync(path.join(h.dataDir, 'tmp'))).toEqual([]);
  });

  it('stores none of several files when one is invalid, and needs multipart', async () => {
    const h = await hub();
    const reply = await uploadPackages(h, [
      { name: 'good.zip', data: thermo() },
      { name: 'bad.zip', data: Buffer.from('x') },
    ]);
    expect(reply.status).toBe(400);
    expect((await get(h, 'management/packages', admin)).json()).toEqual([]);
    expect((await post(h, 'management/upload-package', admin, { file: 'x' })).status).toBe(400);
  });

  it('cleans temp files and unnamed archives at start-up', async () => {
    const first = await startTestHub();
    await uploadPackages(first, [{ name: 'thermo.zip', data: thermo() }]);
    await first.stop();
    fs.writeFileSync(path.join(first.dataDir, 'tmp', 'left-over.part'), 'x');
    fs.writeFileSync(path.join(first.dataDir, 'repository', `${'0'.repeat(64)}.zip`), 'orphan');
    const second = await hub({ dataDir: first.dataDir });
    expect(fs.readdirSync(path.join(second.dataDir, 'tmp'))).toEqual([]);
    expect(repositoryFiles(second)).toHaveLength(1);
    expect((await get(second, 'management/packages/Thermo', admin)).status).toBe(200);
  });
});
