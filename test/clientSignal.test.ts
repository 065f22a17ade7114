/**
 * The light abort signal a long-poll gets over HTTP (http/context.ts, clientGone) behaves as
 * ClientSignal promises (hub/polls/clientSignal.ts): like an AbortSignal, every listener added and not removed
 * hears a client that went away, once; a listener added twice is one.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import { clientGone } from '../src/http/context.js';
import type { ClientSignal } from '../src/hub/polls/clientSignal.js';
import { until } from './support/until.js';

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A real server whose one route hands its clientGone signal to `use` and answers only once aborted. */
async function serverGiving(use: (signal: ClientSignal) => void): Promise<string> {
  const app = new Koa();
  app.use(async (ctx) => {
    const signal = clientGone(ctx);
    use(signal);
    await new Promise<void>((resolve) => signal.addEventListener('abort', { handleEvent: () => resolve() }));
    ctx.body = 'late';
  });
  const handle = app.callback();
  const server = http.createServer((req, res) => void handle(req, res));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

describe('the client-gone signal of a request', () => {
  it('tells every listener added and not removed, once each, when the client goes away', async () => {
    const heard: string[] = [];
    const listener = (name: string): EventListenerObject => ({
      handleEvent: (event: Event) => heard.push(`${name}:${event.type}`),
    });
    const [first, second, third, removed] = ['first', 'second', 'third', 'removed'].map(listener);
    let received!: () => void;
    const requestArrived = new Promise<void>((resolve) => (received = resolve));
    let signal!: ClientSignal;
    const url = await serverGiving((s) => {
      signal = s;
      s.addEventListener('abort', first);
      s.addEventListener('abort', removed);
      s.addEventListener('abort', second);
      s.addEventListener('abort', first); // the same listener again: still one
      s.removeEventListener('abort', removed);
      s.addEventListener('abort', third);
      received();
    });
    const client = new AbortController();
    const request = fetch(url, { signal: client.signal }).catch(() => 'aborted');
    await requestArrived;
    expect(signal.aborted).toBe(false);
    client.abort();
    expect(await request).toBe('aborted');
    await until(() => heard.length === 3);
    expect(signal.aborted).toBe(true);
    expect(heard).toEqual(['first:abort', 'second:abort', 'third:abort']);
  });

  it('keeps the listeners after the first when the first is removed', async () => {
    const heard: string[] = [];
    let received!: () => void;
    const requestArrived = new Promise<void>((resolve) => (received = resolve));
    const url = await serverGiving((s) => {
      const first = { handleEvent: () => heard.push('first') };
      s.addEventListener('abort', first);
      s.addEventListener('abort', { handleEvent: () => heard.push('second') });
      s.removeEventListener('abort', first);
      received();
    });
    const client = new AbortController();
    const request = fetch(url, { signal: client.signal }).catch(() => 'aborted');
    await requestArrived;
    client.abort();
    await request;
    await until(() => heard.length > 0);
    expect(heard).toEqual(['second']);
  });
});
