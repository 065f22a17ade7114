/**
 * Reading request bodies: only POST and PUT carry one, in the identity encoding only, and the whole
 * body must arrive within `bodyTimeoutMs` — far shorter than a long-poll, so a client trickling a body
 * at one byte per second cannot hold a connection and a parser for minutes (408, connection closed).
 */
import type Koa from 'koa';
import { koaBody } from 'koa-body';
import { hubError } from '../errors.js';
import type { HubServices, HubState } from './context.js';

/** Devices and scripts send plain bodies; compressed ones would add a decompression-bomb surface for nothing. */
const unsupportedEncoding = (encoding: string) => hubError('UnsupportedContentEncoding', { encoding });

const bodyTimedOut = (ms: number) => Object.assign(hubError('BodyTimeout', { seconds: ms / 1000 }), { expose: true });

export function bodyReader(services: HubServices): Koa.Middleware<HubState> {
  const { bodyLimitBytes, bodyTimeoutMs } = services.options;
  const bodyAsText = koaBody({
    json: false,
    urlencoded: false,
    multipart: false,
    text: true,
    // Bodies arrive as text and are parsed as lenient JSON (or XML) by the handler that wants them.
    textTypes: [
      'application/json',
      'application/*+json',
      'text/*',
      'application/xml',
      'application/*+xml',
      'application/x-www-form-urlencoded',
    ],
    textLimit: bodyLimitBytes,
  });
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
