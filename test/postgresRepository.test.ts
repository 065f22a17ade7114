/**
 * The package repository shared by two hub processes' worth of hubs on one PostgreSQL database (issue
 * 22), over real HTTP: each hub has its own data directory, so an archive uploaded through one is
 * served by the other only if it lives in the database. A refused upload changes nothing in it.
 */
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, call, get, post, hubsOn } from './support/testHub.js';
import type { TestHub } from './support/testHub.js';
import { packageZip, uploadPackages } from './support/packages.js';
import { postgresServer, testDatabase, testPool } from './support/postgres.js';
import type { TestDatabase } from './support/postgres.js';

const server = await postgresServer();

const MAX_PACKAGE_BYTES = 8 * 1024 * 1024;

/** A package archive of about `bytes` bytes: random bytes do not compress, so it spans several 1 MiB chunks. */
const archiveOf = (name: string, version: string, bytes = 3 * 1024 * 1024) =>
  packageZip({ Name: name, Version: version }, { 'bin/payload': crypto.randomBytes(bytes) });

async function download(h: TestHub, name: string) {
  const response = await fetch(
    `${h.url}/rest/management/packages/${name}/archive?SentinelName=Management&PackageName=Tests&AccessKey=${admin.AccessKey}`,
  );
  return { response, bytes: Buffer.from(await response.arrayBuffer()) };
}

describe.skipIf(!server.available)('the package repository shared by hubs on one PostgreSQL database', () => {
  let database: TestDatabase;
  let a: TestHub;
  let b: TestHub;
  let pool: ReturnType<typeof testPool>;

  /** Everything the repository holds in the database, archives as hashes of their chunks. */
  const stored = async () => ({
    packages: (await pool.query('select * from repository_packages order by name')).rows as unknown[],
    archives: (
      await pool.query(`select sha256, chunk, md5(data) as md5, length(data) as bytes
        from repository_archives order by sha256, chunk`)
    ).rows as unknown[],
  });

  beforeAll(async () => {
    database = await testDatabase(server);
    pool = testPool(database.url);
    [a, b] = await hubsOn(database.url, 2, { maxPackageBytes: MAX_PACKAGE_BYTES });
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await pool?.end();
    await database?.drop();
  });

  it('serves through B, byte for byte, the archive uploaded through A; a new version replaces it everywhere', async () => {
    const first = archiveOf('Thermo', '1.0.0');
    const uploaded = await uploadPackages(a, [{ name: 'thermo-1.zip', data: first }]);
    expect(uploaded.status).toBe(200);
    const fromB = await download(b, 'Thermo');
    expect(fromB.response.status).toBe(200);
    expect(fromB.response.headers.get('content-length')).toBe(String(first.length));
    expect(fromB.response.headers.get('content-disposition')).toBe('attachment; filename="thermo-1.zip"');
    expect(fromB.bytes.equals(first)).toBe(true);
    expect((await stored()).archives.length).toBeGreaterThan(1); // more than one chunk

    const second = archiveOf('Thermo', '2.0.0');
    expect((await uploadPackages(b, [{ name: 'thermo-2.zip', data: second }])).status).toBe(200);
    expect((await download(a, 'Thermo')).bytes.equals(second)).toBe(true);
    const sha = crypto.createHash('sha256').update(second).digest('hex');
    expect(new Set((await stored()).archives.map((r) => (r as { sha256: string }).sha256))).toEqual(new Set([sha]));
  });

  it('an instance on B sees the package file that A uploaded and deleted', async () => {
    await post(b, 'management/sentinels/S1/packages', admin, { Name: 'P3', PackageFile: 'Other' });
    const missing = async () =>
      (await get(b, 'management/sentinels/S1/packages/P3', admin)).json<{ PackageFileMissing: boolean }>()
        .PackageFileMissing;
    expect(await missing()).toBe(true);
    expect((await uploadPackages(a, [{ name: 'other.zip', data: archiveOf('Other', '1', 1000) }])).status).toBe(200);
    expect(await missing()).toBe(false);
    expect((await call(a, 'DELETE', 'management/packages/Other', admin)).status).toBe(204);
    expect(await missing()).toBe(true);
  });

  it('a package deleted through B is gone through A, its archive with it', async () => {
    expect((await uploadPackages(a, [{ name: 'gone.zip', data: archiveOf('Gone', '1') }])).status).toBe(200);
    const before = await stored();
    expect((await call(b, 'DELETE', 'management/packages/Gone', admin)).status).toBe(204);
    expect((await get(a, 'management/packages/Gone', admin)).status).toBe(404);
    expect((await download(a, 'Gone')).response.status).toBe(404);
    expect((await call(a, 'DELETE', 'management/packages/Gone', admin)).status).toBe(404);
    const after = await stored();
    expect(after.packages.length).toBe(before.packages.length - 1);
    expect(after.archives.length).toBeLessThan(before.archives.length);
    expect((await download(b, 'Thermo')).response.status).toBe(200); // the others stay
  });

  it('a refused upload changes nothing in the database', async () => {
    const before = await stored();
    // One good and one invalid archive: neither is stored.
    const mixed = await uploadPackages(a, [
      { name: 'new.zip', data: archiveOf('New', '1') },
      { name: 'bad.zip', data: Buffer.from('not a zip') },
    ]);
    expect(mixed.status).toBe(400);
    // Over the size limit.
    const large = await uploadPackages(b, [
      { name: 'large.zip', data: archiveOf('Large', '1', MAX_PACKAGE_BYTES + 1) },
    ]);
    expect(large.status).toBe(413);
    // A new version of a stored package that is not a valid package.
    const broken = packageZip({ Name: 'Thermo' });
    expect((await uploadPackages(b, [{ name: 'thermo.zip', data: broken }])).status).toBe(400);
    expect(await stored()).toEqual(before);
    expect((await get(b, 'management/packages/New', admin)).status).toBe(404);
  });
});
