/**
 * Serves the built console (dist/console) at /console/ and redirects / there, under the listen prefix
 * the request came with. The build is read once into memory and looked up by exact name, so no request
 * path reaches the filesystem; hashed assets are immutable, index.html is never cached.
 */
import type { Context, Middleware } from 'koa';
import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { hubError } from '../errors.js';
import { collapseSlashes } from './paths.js';

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json', '.txt']);

/** The page's own rules: everything from the hub itself, nothing inline but style properties. */
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

interface Asset {
  body: Buffer;
  type: string;
  immutable: boolean;
  compressed: Map<'br' | 'gzip', Promise<Buffer>>;
}

/** dist/console at the package root, whether this module runs from src/ (tsx) or from dist/src/. */
export function consoleBuildDirectory(): string {
  let root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  if (path.basename(root) === 'dist') root = path.dirname(root);
  return path.join(root, 'dist', 'console');
}

function readBuild(directory: string): Map<string, Asset> | undefined {
  if (!fs.existsSync(path.join(directory, 'index.html'))) return undefined;
  const assets = new Map<string, Asset>();
  for (const entry of fs.readdirSync(directory, { recursive: true, withFileTypes: true })) {
    // Dotfiles (the build's stamp) are not part of the page.
    if (!entry.isFile() || entry.name.startsWith('.')) continue;
    const full = path.join(entry.parentPath, entry.name);
    const name = path.relative(directory, full).split(path.sep).join('/');
    const extension = path.extname(name);
    assets.set(name, {
      body: fs.readFileSync(full),
      type: TYPES[extension] ?? 'application/octet-stream',
      // Vite puts content-hashed files under assets/; everything else keeps its name across builds.
      immutable: name.startsWith('assets/'),
      compressed: new Map(),
    });
  }
  return assets;
}

function compressed(asset: Asset, encoding: 'br' | 'gzip'): Promise<Buffer> {
  let done = asset.compressed.get(encoding);
  if (!done) {
    done =
      encoding === 'br'
        ? brotli(asset.body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } })
        : gzip(asset.body, { level: 9 });
    asset.compressed.set(encoding, done);
  }
  return done;
}

const notBuilt = () => hubError('ConsoleNotBuilt');

const requestTargets = new WeakMap<http.IncomingMessage, string>();

/** A target's path without query, repeated or trailing slashes, in lower case: `//A//?x` → `/a`. */
function rootOf(target: string): string {
  const query = target.indexOf('?');
  return collapseSlashes(query < 0 ? target : target.slice(0, query))
    .replace(/\/$/, '')
    .toLowerCase();
}

/**
 * Called with each request before its listen prefix is stripped, so the redirect from / can put the
 * prefix back. Only a request for / is redirected, so only a target naming a prefix itself (`<prefix>`
 * or `<prefix>/`, any query) is kept, decided on its path alone (a prefix or a query may hold `/rest/`):
 * the interfaces' requests (thousands of waiting polls) are not.
 */
export function rootTargetKeeper(prefixes: string[]): (req: http.IncomingMessage) => void {
  const roots = new Set(prefixes.map((p) => p.toLowerCase()));
  return (req) => {
    const url = req.url ?? '/';
    if (roots.has(rootOf(url))) requestTargets.set(req, url);
  };
}

/** Only plain path segments: a target like `//host/` must never turn the redirect into another site's. */
const PLAIN_PREFIX = /^(\/[\w.~%!$&'()*+,;=:@-]+)*$/;

/** The prefix a request for / came under (`/constellation`), '' at none: its target, less query and slashes. */
function prefixOf(ctx: Context): string {
  const target = requestTargets.get(ctx.req) ?? '/';
  const prefix = collapseSlashes(target.split('?')[0]).replace(/\/$/, '');
  return PLAIN_PREFIX.test(prefix) ? prefix : '';
}

export function consoleAssets(directory = consoleBuildDirectory()): Middleware {
  let assets: Map<string, Asset> | undefined;
  return async (ctx, next) => {
    if (ctx.path === '/' && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
      ctx.status = 302;
      ctx.redirect(`${prefixOf(ctx)}/console/`);
      return;
    }
    if (ctx.path !== '/console' && !ctx.path.startsWith('/console/')) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw hubError('MethodNotAllowed');
    // The page's relative URLs need the trailing slash; relative, the redirect keeps any prefix.
    if (ctx.path === '/console') {
      ctx.status = 302;
      ctx.redirect(`console/${ctx.search}`);
      return;
    }
    assets ??= readBuild(directory);
    if (!assets) throw notBuilt();
    const name = ctx.path.slice('/console/'.length);
    // Unknown names directly under /console/ are the page itself (it routes on the hash); unknown assets
    // and deeper paths are 404 (from a deeper path the page's relative asset URLs would miss).
    const asset = assets.get(name) ?? (name.includes('/') ? undefined : assets.get('index.html'));
    if (!asset) return next();
    ctx.type = asset.type;
    ctx.set('Cache-Control', asset.immutable ? 'public, max-age=31536000, immutable' : 'no-store');
    ctx.set('X-Content-Type-Options', 'nosniff');
    if (asset.type.startsWith('text/html')) {
      ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
      ctx.set('Referrer-Policy', 'no-referrer');
    }
    ctx.vary('Accept-Encoding');
    const encoding =
      COMPRESSIBLE.has(path.extname(name) || '.html') && asset.body.length > 512
        ? ctx.acceptsEncodings('br', 'gzip', 'identity')
        : 'identity';
    if (encoding === 'br' || encoding === 'gzip') {
      ctx.set('Content-Encoding', encoding);
      ctx.body = await compressed(asset, encoding);
    } else {
      ctx.body = asset.body;
    }
  };
}
