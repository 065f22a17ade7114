/**
 * Reading request bodies: only POST and PUT carry one, in the identity encoding only, and the whole
 * body must arrive within `bodyTimeoutMs` — far shorter than a long-poll, so a client trickling a body
 * at one byte per second cannot hold a connection and a parser for minutes (408, connection closed).
 */
import type Koa from 'koa';
import getRawBody from 'raw-body';
import { hubError } from '../errors.js';
import type { HubServices, HubState } from './context.js';

/** Devices and scripts send plain bodies; compressed ones would add a decompression-bomb surface for nothing. */
const unsupportedEncoding = (encoding: string) => hubError('UnsupportedContentEncoding', { encoding });

const bodyTimedOut = (ms: number) => Object.assign(hubError('BodyTimeout', { seconds: ms / 1000 }), { expose: true });

const TEXT_TYPES = [
  'application/json',
  'application/*+json',
  'text/*',
  'application/xml',
  'application/*+xml',
  'application/x-www-form-urlencoded',
];

export function bodyReader(services: HubServices): Koa.Middleware<HubState> {
  const { bodyLimitBytes, bodyTimeoutMs } = services.options;
  // Bodies arrive as text and are parsed as lenient JSON (or XML) by the handler that wants them; a body
  // of another type is left unread. raw-body directly rather than koa-body: koa-body loads co-body, qs
  // and formidable with it, ~2.5 MiB of heap in every process for the multipart upload alone uses
  // (management/repository.ts imports it when a package is uploaded).
  const bodyAsText = async (ctx: Koa.ParameterizedContext<HubState>, next: Koa.Next) => {
    if (ctx.is(TEXT_TYPES)) {
      const length = ctx.get('Content-Length');
      ctx.request.body = await getRawBody(ctx.req, {
        encoding: 'utf-8',
        limit: bodyLimitBytes,
        length: length === '' ? undefined : Number(length),
      });
    }
    return next();
  };
  const read: Koa.Middleware<HubState> = async (ctx, next) => {
    const encoding = ctx.get('Content-Encoding').trim().toLowerCase();
    if (encoding !== '' && encoding !== 'identity') throw unsupportedEncoding(encoding);
    // raw-body rejects on the stream's error event: the read stops and the error mapping answers 408.
    const timer = setTimeout(() => ctx.req.emit('error', bodyTimedOut(bodyTimeoutMs)), bodyTimeoutMs);
    try {
      await bodyAsText(ctx, () => {
        clearTimeout(timer);
        return next();
      });
    } finally {
      clearTimeout(timer);
    }
  };
  // GET and DELETE carry no body: they skip the body reader altogether (not even a promise of its own).
  return (ctx, next) => (ctx.method === 'POST' || ctx.method === 'PUT' ? read(ctx, next) : next());
}
