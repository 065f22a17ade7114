/** The server side of the console: redirect, OpenAPI document, and the console's management endpoints. */
import { beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { buildConsoleIfStale } from './support/browser.js';
import { ADMIN_KEY, admin, call, get, hubsStoppedAfterEach, pkg, post, testConfiguration } from './support/testHub.js';

const hub = hubsStoppedAfterEach();

describe('serving the built console', () => {
  beforeAll(() => buildConsoleIfStale(), 120_000);

  it('never caches the page, caches hashed assets for good, and compresses them when asked', async () => {
    const h = await hub();
    const page = await fetch(`${h.url}/console/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    const html = await page.text();
    // Relative, so the same page works under a listen prefix too.
    const script = /src="\.(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const plain = await fetch(`${h.url}/console${script}`, { headers: { 'Accept-Encoding': 'identity' } });
    expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(plain.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const body = Buffer.from(await plain.arrayBuffer());
    // undici's fetch would decode gzip itself: node:http shows what travels.
    const zipped = await new Promise<{ encoding?: string; vary?: string; bytes: Buffer }>((resolve, reject) => {
      request(`${h.url}/console${script}`, { headers: { 'Accept-Encoding': 'gzip' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ encoding: res.headers['content-encoding'], vary: res.headers.vary, bytes: Buffer.concat(chunks) }),
        );
      })
        .on('error', reject)
        .end();
    });
    expect(zipped.encoding).toBe('gzip');
    expect(zipped.vary).toMatch(/Accept-Encoding/);
    expect(gunzipSync(zipped.bytes).equals(body)).toBe(true);
    expect(zipped.bytes.length).toBeLessThan(body.length / 2);
  });

  it('answers the page for unknown console paths, 404 for unknown assets and 405 for writes', async () => {
    const h = await hub();
    // The page's relative URLs need the trailing slash.
    const bare = await fetch(`${h.url}/console`, { redirect: 'manual' });
    expect([bare.status, bare.headers.get('location')]).toEqual([302, 'console/']);
    expect((await fetch(`${h.url}/console`)).headers.get('content-type')).toBe('text/html; charset=utf-8');
    // From a deeper path the page's relative asset URLs would miss: not the page.
    expect((await fetch(`${h.url}/console/a/b`)).status).toBe(404);
    expect((await fetch(`${h.url}/console/stateobjects`)).status).toBe(200);
    const missing = await fetch(`${h.url}/console/assets/nothing-1234.js`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ Message: expect.stringContaining('No HTTP resource') });
    expect((await fetch(`${h.url}/console/.console-built`)).headers.get('content-type')).toBe(
      'text/html; charset=utf-8',
    );
    expect((await fetch(`${h.url}/console/`, { method: 'POST' })).status).toBe(405);
  });

  it('under a listen prefix, redirects <prefix>/ to <prefix>/console/ and serves the page and its assets there', async () => {
    const h = await hub({ config: { ...testConfiguration(), listenUris: ['http://+:8088/constellation/'] } });
    const origin = h.url.replace(/\/constellation$/, '');
    expect(h.url).toBe(`${origin}/constellation`);
    for (const path of ['/constellation/', '/constellation', '/constellation/?x=1']) {
      const response = await fetch(`${origin}${path}`, { redirect: 'manual' });
      expect([path, response.status, response.headers.get('location')]).toEqual([path, 302, '/constellation/console/']);
    }
    // Prefixes match across repeated slashes and in any case: the redirect keeps the case the client used,
    // and never starts with `//` (which a browser would read as another host).
    for (const [path, location] of [
      ['//constellation//', '/constellation/console/'],
      ['/Constellation/', '/Constellation/console/'],
    ]) {
      const response = await fetch(`${origin}${path}`, { redirect: 'manual' });
      expect([path, response.status, response.headers.get('location')]).toEqual([path, 302, location]);
    }
    const bare = await fetch(`${origin}/constellation/console`, { redirect: 'manual' });
    expect([bare.status, new URL(bare.headers.get('location')!, `${origin}/constellation/console`).pathname]).toEqual([
      302,
      '/constellation/console/',
    ]);
    const page = await fetch(`${origin}/constellation/`);
    expect(page.url).toBe(`${origin}/constellation/console/`);
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(assets.length).toBeGreaterThanOrEqual(3);
    for (const asset of assets) {
      expect(asset).toMatch(/^\.\//);
      const response = await fetch(new URL(asset, page.url));
      expect([asset, response.status]).toEqual([asset, 200]);
      if (asset.startsWith('./assets/'))
        expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    }
    // Outside the prefix nothing is served, the console included.
    expect((await fetch(`${origin}/console/`)).status).toBe(404);
    expect((await fetch(`${origin}/constellation/openapi.json`)).status).toBe(200);
  });

  it('keeps a listen prefix holding /rest/, and a query naming /rest/, in the redirect', async () => {
    const h = await hub({ config: { ...testConfiguration(), listenUris: ['http://+:8088/api/rest/hub/'] } });
    const origin = h.url.replace(/\/api\/rest\/hub$/, '');
    for (const path of ['/api/rest/hub/', '/api/rest/hub', '/api/rest/hub/?next=/rest/x', '//api//rest//hub//']) {
      const response = await fetch(`${origin}${path}`, { redirect: 'manual' });
      expect([path, response.status, response.headers.get('location')]).toEqual([path, 302, '/api/rest/hub/console/']);
    }
    expect((await fetch(`${origin}/api/rest/hub/`)).url).toBe(`${origin}/api/rest/hub/console/`);
    expect(
      (
        await fetch(
          `${origin}/api/rest/hub/rest/management/overview?SentinelName=Management&PackageName=Tests&AccessKey=${ADMIN_KEY}`,
        )
      ).status,
    ).toBe(200);
  });
});

describe('console endpoints', () => {
  it('redirects / to the console', async () => {
    const h = await hub();
    const response = await fetch(`${h.url}/`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/console/');
  });

  it('serves /openapi.json with request bodies generated from the handlers’ zod schemas', async () => {
    const h = await hub();
    const response = await fetch(`${h.url}/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }> };
    };
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths['/rest/platform/PushStateObject'])).toEqual(['get', 'post']);
    expect(document.paths['/rest/management/overview'].get).toBeDefined();
    // The credential schema's rule (AccessKey ≥ 8 characters) comes from http/management/bodies.ts itself.
    expect(document.components.schemas.Credential.properties?.AccessKey).toMatchObject({
      type: 'string',
      minLength: 8,
    });
    expect(document.components.schemas.PackageDescriptor.required).toContain('PackageName');
  });

  it('refuses the console endpoints without a management key', async () => {
    const h = await hub({ options: { authFailureStepMs: 0 } });
    for (const path of ['management/overview', 'management/descriptors', 'management/server/status']) {
      expect((await get(h, path, pkg('S1', 'P1'))).status).toBe(403);
      expect((await get(h, path, undefined)).status).toBe(403);
    }
  });

  it('gives the overview of instances with their StateObjects, queued messages and last log', async () => {
    const h = await hub();
    expect((await get(h, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'A', value: 1 })).status).toBe(204);
    expect((await get(h, 'platform/PushStateObject', pkg('S1', 'P1'), { name: 'B', value: 2 })).status).toBe(204);
    expect((await get(h, 'platform/SubscribeToMessage', pkg('S1', 'P1'))).status).toBe(200);
    expect(
      (
        await get(
          h,
          'consumer/SendMessage',
          { SentinelName: 'Consumer', PackageName: 'X', AccessKey: admin.AccessKey },
          { scope: 'Package', args: 'S1/P1', key: 'Hello' },
        )
      ).status,
    ).toBe(204);
    expect((await get(h, 'platform/WriteLog', pkg('S1', 'P1'), { message: 'first' })).status).toBe(204);
    expect((await get(h, 'platform/WriteLog', pkg('S1', 'P1'), { message: 'second', level: 'Warn' })).status).toBe(204);
    const reply = await get(h, 'management/overview', admin);
    expect(reply.status).toBe(200);
    const { Sentinels } = reply.json<{ Sentinels: { Name: string; Packages: Record<string, unknown>[] }[] }>();
    const p1 = Sentinels.find((s) => s.Name === 'S1')?.Packages.find((p) => p.Name === 'P1');
    expect(p1).toMatchObject({
      StateObjects: 2,
      QueuedMessages: 1,
      Connected: true,
      LastLog: { Level: 'Warn', Message: 'second' },
    });
    const p2 = Sentinels.find((s) => s.Name === 'S1')?.Packages.find((p) => p.Name === 'P2');
    expect(p2).toMatchObject({ StateObjects: 0, QueuedMessages: 0, Connected: false, LastSeen: null, LastLog: null });
  });

  it('lists every declared descriptor and the server status', async () => {
    const h = await hub();
    const descriptor = { PackageName: 'P1', MessageCallbacks: [{ MessageKey: 'Hello', Parameters: [] }] };
    expect((await post(h, 'platform/DeclarePackageDescriptor', pkg('S1', 'P1'), descriptor)).status).toBe(204);
    const list = await get(h, 'management/descriptors', admin);
    expect(list.json()).toEqual([{ SentinelName: 'S1', PackageName: 'P1', Descriptor: descriptor }]);
    const status = (await call(h, 'GET', 'management/server/status', admin)).json<Record<string, unknown>>();
    expect(status).toMatchObject({
      Version: h.services.version,
      WaitingLongPolls: 0,
      License: { Edition: 'Community' },
    });
    expect(status.RequestsTotal).toBeGreaterThan(0);
  });
});
