/**
 * What Constellation's own tools send (issue 20), replayed byte for byte over a raw socket: the Package
 * Tools CLI (ctln, Python's `requests`) uploads through `UploadPackage` with a file part that has no
 * Content-Type; the Console reads `ExceptionMessage` from a refused configuration.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { strToU8, zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { RawConnection } from './support/rawHttp.js';
import { admin, get, hubsStoppedAfterEach, post, type TestHub, configFileText } from './support/testHub.js';

const hub = hubsStoppedAfterEach();

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('icon')]);
const myPackage = (version = '1.0.0', extra: Record<string, Uint8Array> = {}) =>
  Buffer.from(
    zipSync({
      ...extra,
      'manifest.json': strToU8(
        JSON.stringify({
          Name: 'MyPackage',
          Version: version,
          Icon: 'icon.png',
          Settings: [{ Key: 'Interval', Type: 'Int32', DefaultValue: 5 }],
        }),
      ),
      'icon.png': PNG,
      'bin/MyPackage.py': strToU8('print("hello")\n'),
    }),
  );

/**
 * The request Python 2's `requests` writes for `requests.post(url, files={'file': open('MyPackage.zip', 'rb')})`
 * (urllib3's encode_multipart_formdata: a 32-hex-digit boundary, no Content-Type on the part).
 */
function requestsUpload(
  port: number,
  action: string,
  archive: Buffer,
  partHeaders = ['Content-Disposition: form-data; name="file"; filename="MyPackage.zip"'],
): Buffer {
  const boundary = randomBytes(16).toString('hex');
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\n${partHeaders.map((h) => `${h}\r\n`).join('')}\r\n`),
    archive,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const head = [
    `POST /rest/management/${action}?SentinelName=Management&PackageName=ConstellationPackageToolsCLI&AccessKey=${admin.AccessKey} HTTP/1.1`,
    `Host: 127.0.0.1:${port}`,
    `Content-Length: ${body.length}`,
    'Accept-Encoding: gzip, deflate',
    'Accept: */*',
    'User-Agent: python-requests/2.27.1',
    'Connection: keep-alive',
    `Content-Type: multipart/form-data; boundary=${boundary}`,
  ];
  return Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`), body]);
}

async function replay(h: TestHub, bytes: Buffer) {
  const connection = await RawConnection.open(h.port);
  try {
    connection.write(bytes);
    return await connection.answer();
  } finally {
    connection.close();
  }
}

const repositoryFiles = (h: TestHub) => fs.readdirSync(path.join(h.dataDir, 'repository'));

describe("ctln's upload (Python requests, no Content-Type on the file part)", () => {
  it('is stored through UploadPackage and through upload-package, both 200 with the same body; then listed', async () => {
    // Megabytes of incompressible bytes: the part arrives in many chunks, all of which must reach the file.
    const archive = myPackage('1.0.0', { 'bin/data.bin': randomBytes(3 * 1024 * 1024) });
    const answers = [];
    for (const action of ['UploadPackage', 'upload-package']) {
      const h = await hub();
      const answer = await replay(h, requestsUpload(h.port, action, archive));
      expect(answer.status, answer.body).toBe(200);
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
      const [entry] = JSON.parse(answer.body) as Record<string, unknown>[];
      expect(entry).toMatchObject({
        Name: 'MyPackage',
        Version: '1.0.0',
        FileName: 'MyPackage.zip',
        Size: archive.length,
        HasIcon: true,
      });
      expect((await get(h, 'management/packages', admin)).json()).toEqual([entry]);
      expect((await get(h, 'management/packages/MyPackage', admin)).json()).toEqual(entry);
      const icon = await fetch(
        `${h.url}/rest/management/packages/MyPackage/icon?SentinelName=Management&PackageName=T&AccessKey=${admin.AccessKey}`,
      );
      expect(Buffer.from(await icon.arrayBuffer()).equals(PNG)).toBe(true);
      expect(repositoryFiles(h)).toEqual([`${entry.Sha256 as string}.zip`]);
      expect(fs.readFileSync(path.join(h.dataDir, 'repository', `${entry.Sha256 as string}.zip`)).equals(archive)).toBe(
        true,
      );
      answers.push({ ...entry, UploadedAt: undefined });
    }
    expect(answers[0]).toEqual(answers[1]);
  });

  it('takes the action name in any case', async () => {
    const h = await hub();
    for (const [action, version] of [
      ['uploadpackage', '1.0.1'],
      ['UPLOADPACKAGE', '1.0.2'],
      ['Upload-Package', '1.0.3'],
    ]) {
      const answer = await replay(h, requestsUpload(h.port, action, myPackage(version)));
      expect(answer.status, `${action}: ${answer.body}`).toBe(200);
      expect(JSON.parse(answer.body)).toMatchObject([{ Name: 'MyPackage', Version: version }]);
    }
  });

  it('judges the archive by its bytes whatever the part says its type is, under any field name', async () => {
    const h = await hub();
    const types = [
      'application/octet-stream',
      'application/x-zip-compressed',
      'text/plain; charset=utf-8',
      'image/gif',
    ];
    for (const [i, type] of types.entries()) {
      const version = `2.0.${i}`;
      const disposition = `Content-Disposition: form-data; name="${i % 2 ? 'file' : 'package'}"; filename="MyPackage.zip"`;
      const answer = await replay(
        h,
        requestsUpload(h.port, i % 2 ? 'UploadPackage' : 'upload-package', myPackage(version), [
          disposition,
          `Content-Type: ${type}`,
        ]),
      );
      expect(answer.status, `${type}: ${answer.body}`).toBe(200);
      expect(JSON.parse(answer.body)).toMatchObject([{ Version: version }]);
    }
  });

  it('refuses bytes that are not a package (400, nothing stored), with or without a part Content-Type', async () => {
    const h = await hub();
    const before = (await get(h, 'management/packages', admin)).text;
    for (const headers of [[], ['Content-Type: application/zip']]) {
      const answer = await replay(
        h,
        requestsUpload(h.port, 'UploadPackage', Buffer.from('not a zip at all'), [
          'Content-Disposition: form-data; name="file"; filename="MyPackage.zip"',
          ...headers,
        ]),
      );
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body).Message).toMatch(/^The file is not a valid package: not a readable zip archive/);
    }
    expect((await get(h, 'management/packages', admin)).text).toBe(before);
    expect(repositoryFiles(h)).toEqual([]);
  });

  it('still takes a part without filename nor Content-Type for a field: a form of fields only has no file (400)', async () => {
    const h = await hub();
    const answer = await replay(
      h,
      requestsUpload(h.port, 'UploadPackage', myPackage(), ['Content-Disposition: form-data; name="file"']),
    );
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toEqual({
      Message: 'The form has no file: attach one or more package archives.',
      Code: 'MissingPackageFile',
    });
    expect(repositoryFiles(h)).toEqual([]);
  });
});

describe("the Console's refused configuration", () => {
  it('gives the reason as ExceptionMessage besides Message and MessageDetail; the file is unchanged', async () => {
    const h = await hub();
    const before = configFileText(h);
    const refused = await post(h, 'management/configuration', admin, '<hub><sentinels></hub>', 'application/xml');
    expect(refused.status).toBe(400);
    const body = refused.json<Record<string, string>>();
    expect(body.Message).toBe('The configuration is not valid.');
    expect(body.MessageDetail).toMatch(/^not well-formed XML at line 1/);
    expect(body.ExceptionMessage).toBe(body.MessageDetail);
    expect(configFileText(h)).toBe(before);
  });
});
