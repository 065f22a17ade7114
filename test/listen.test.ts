/**
 * Every listen URI is served: several at once, path prefixes (`http://+:8088/constellation/` serves the
 * interfaces under `/constellation/rest/…`), and https when a certificate and key are given.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseListenUri } from '../src/listen.js';
import { constellationFile, controlHub } from './support/constellation.js';
import { get, hubsStoppedAfterEach, startTestHub, tempDir } from './support/testHub.js';

const hub = hubsStoppedAfterEach();

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const withUris = (...uris: string[]) =>
  constellationFile.replace(
    '<uri listenUri="http://+:8088/" />',
    uris.map((u) => `<uri listenUri="${u}" />`).join('\n      '),
  );

const hasOpenssl = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe('listen URIs', () => {
  it('parses Constellation listen URIs and refuses the rest', () => {
    expect(parseListenUri('http://+:8088/')).toMatchObject({
      protocol: 'http',
      host: undefined,
      port: 8088,
      prefix: '',
    });
    expect(parseListenUri('http://*:8088/constellation/')).toMatchObject({
      host: undefined,
      port: 8088,
      prefix: '/constellation',
    });
    expect(parseListenUri('https://[::1]:8443/hub')).toMatchObject({
      protocol: 'https',
      host: '::1',
      port: 8443,
      prefix: '/hub',
    });
    expect(() => parseListenUri('garbage')).toThrow(/not of the form/);
    expect(() => parseListenUri('ftp://+:21/')).toThrow(/not of the form/);
    expect(() => parseListenUri('http://+:99999/')).toThrow(/out of range/);
  });

  it('serves every listen URI at once, one of them under a path prefix', async () => {
    const [a, b] = [await freePort(), await freePort()];
    const h = await hub({
      config: withUris(`http://127.0.0.1:${a}/`, `http://127.0.0.1:${b}/constellation/`),
      options: { host: undefined, port: undefined },
    });
    expect(h.urls).toEqual([`http://127.0.0.1:${a}`, `http://127.0.0.1:${b}/constellation`]);
    expect((await get({ url: `http://127.0.0.1:${a}` }, 'management/CheckAccess', controlHub)).status).toBe(200);
    expect(
      (await get({ url: `http://127.0.0.1:${b}/constellation` }, 'management/CheckAccess', controlHub)).status,
    ).toBe(200);
    // Outside the prefix nothing is served.
    const outside = await get({ url: `http://127.0.0.1:${b}` }, 'management/CheckAccess', controlHub);
    expect(outside.status).toBe(404);
    expect(outside.json<{ MessageDetail: string }>().MessageDetail).toMatch(/\/constellation\//);
    // As Constellation's HttpListener prefixes: whatever the case, however many slashes.
    for (const base of [
      `http://127.0.0.1:${b}/CONSTELLATION`,
      `http://127.0.0.1:${b}//constellation`,
      `http://127.0.0.1:${b}/constellation/`,
    ]) {
      expect((await get({ url: base }, 'management/CheckAccess', controlHub)).status, base).toBe(200);
    }
    expect(
      (await get({ url: `http://127.0.0.1:${b}/constellationx` }, 'management/CheckAccess', controlHub)).status,
    ).toBe(404);
  });

  it('with HUB_HOST/HUB_PORT set, serves the first URI’s prefix on that address only', async () => {
    const h = await hub({ config: withUris('http://+:8088/constellation/', 'http://+:8089/') });
    expect(h.urls).toHaveLength(1);
    expect(h.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/constellation$/);
    expect((await get(h, 'management/CheckAccess', controlHub)).status).toBe(200);
  });

  it('refuses to start on an https URI without a certificate, saying how to give one or use a proxy', async () => {
    await expect(startTestHub({ config: withUris('https://+:8443/') })).rejects.toThrow(
      /HUB_TLS_CERT and HUB_TLS_KEY.*reverse proxy/,
    );
  });

  it.skipIf(!hasOpenssl)('serves an https URI over TLS with HUB_TLS_CERT and HUB_TLS_KEY', async () => {
    const dir = tempDir();
    const cert = path.join(dir, 'cert.pem');
    const key = path.join(dir, 'key.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
      ],
      { stdio: 'ignore' },
    );
    const h = await hub({
      config: withUris('https://127.0.0.1:8443/constellation/'),
      options: { tlsCertPath: cert, tlsKeyPath: key },
    });
    expect(h.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/constellation$/);
    const query = new URLSearchParams({ ...controlHub }).toString();
    const status = await new Promise<number>((resolve, reject) => {
      https
        .get(`${h.url}/rest/management/CheckAccess?${query}`, { rejectUnauthorized: false }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
        .on('error', reject);
    });
    expect(status).toBe(200);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
