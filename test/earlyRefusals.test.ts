/**
 * Refusals sent before the body is read (issue 30, item 10): a body past the limit (413), a compressed
 * body (415), a wrong key (403). Each answer reaches a client still sending its body — Node's fetch on a
 * keep-alive connection — every time: the hub reads and discards what keeps arriving for a bounded time
 * and size before it closes the connection (server.ts, lingering close), as nginx does, instead of
 * closing on unread data, which resets the connection before the client reads the answer. Nothing is
 * stored.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import { LINGER_BYTES } from '../src/http/lingeringClose.js';
import { killCliProcesses, startHubProcess } from './support/hubCli.js';
import type { CliProcess } from './support/hubCli.js';
import { consumer, DEV_KEY, get, pkg, tempDir } from './support/testHub.js';

type TestHub = CliProcess & { url: string };

const ROUNDS = 20;
const bodyOf = (mib: number) => JSON.stringify({ Name: 'Big', Value: 'x'.repeat(mib * 1024 * 1024) });
/** Three times the 1 MiB default limit: the size that was refused by a reset 14 times in 20 (issue 30). */
const OVERSIZED = bodyOf(3);
/**
 * More than loopback's socket buffers hold, so that the client is still writing when the hub answers
 * (3 MB fit in them here): closing at once failed 9 of 20 such fetches with EPIPE before the fix.
 */
const LARGER_THAN_BUFFERS = bodyOf(16);

interface Outcome {
  status: number | string;
  body?: unknown;
  connection?: string | null;
}

async function push(
  hub: TestHub,
  headers: Record<string, string>,
  key = DEV_KEY,
  body: string = OVERSIZED,
): Promise<Outcome> {
  const url = new URL(`${hub.url}/rest/platform/PushStateObject`);
  for (const [k, v] of Object.entries(pkg('S1', 'P1', key))) url.searchParams.set(k, v);
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body,
      keepalive: true,
    });
    const text = await response.text();
    return {
      status: response.status,
      body: text ? JSON.parse(text) : undefined,
      connection: response.headers.get('connection'),
    };
  } catch (error) {
    const cause = (error as Error & { cause?: Error }).cause;
    return { status: `${(error as Error).message}: ${cause?.message ?? ''}` };
  }
}

async function rounds(send: () => Promise<Outcome>): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (let i = 0; i < ROUNDS; i++) outcomes.push(await send());
  return outcomes;
}

describe('refusals before the body is read reach the client every time', () => {
  let hub: TestHub;
  const dataDir = tempDir();
  beforeAll(async () => {
    // A process of its own, as an operator runs it: in the test's process the client and the hub share
    // one event loop, and the reset never came first. No delay after a wrong key: twenty of them in a
    // row would otherwise wait up to 3 s each.
    hub = await startHubProcess(dataDir, {
      HUB_AUTH_FAILURE_STEP_MS: '0',
      HUB_AUTH_FAILURE_MAX_DELAY_MS: '0',
      HUB_AUTH_FAILURE_LIMIT: '1000000',
    });
  }, 120_000);
  afterAll(async () => {
    hub?.proc.kill('SIGTERM');
    await hub?.exited;
    killCliProcesses();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const nothingStored = async () => {
    const reply = await get(hub, 'consumer/RequestStateObjects', consumer(), { sentinel: 'S1', package: 'P1' });
    expect(reply.json()).toEqual([]);
  };

  it.each([
    ['3 MB', OVERSIZED],
    ['16 MB', LARGER_THAN_BUFFERS],
  ])(
    `${ROUNDS} bodies of %s in a row: each answered 413 with the JSON error, the connection closed`,
    async (_, body) => {
      const outcomes = await rounds(() => push(hub, {}, DEV_KEY, body));
      expect(outcomes).toEqual(
        Array.from({ length: ROUNDS }, () => ({
          status: 413,
          body: { Message: 'The request body is too large.', Code: 'BodyTooLarge' },
          connection: 'close',
        })),
      );
      await nothingStored();
    },
  );

  it(`${ROUNDS} compressed bodies of 16 MB: each answered 415`, async () => {
    const outcomes = await rounds(() => push(hub, { 'Content-Encoding': 'gzip' }, DEV_KEY, LARGER_THAN_BUFFERS));
    expect(outcomes.map((o) => [o.status, (o.body as { Code?: string } | undefined)?.Code])).toEqual(
      Array.from({ length: ROUNDS }, () => [415, 'UnsupportedContentEncoding']),
    );
    await nothingStored();
  });

  it(`${ROUNDS} bodies of 16 MB with a wrong key: each answered 403, the connection kept and the body read`, async () => {
    const outcomes = await rounds(() => push(hub, {}, 'wrong-key', LARGER_THAN_BUFFERS));
    expect(
      outcomes.map((o) => [o.status, (o.body as { Code?: string } | undefined)?.Code, o.connection === 'close']),
    ).toEqual(Array.from({ length: ROUNDS }, () => [403, 'AccessDenied', false]));
    await nothingStored();
  });

  it('a body under the limit after the refusals is stored: the hub still serves on a new connection', async () => {
    const small = await push(hub, {}, DEV_KEY, JSON.stringify({ Name: 'Small', Value: 1 }));
    expect(small.status).toBe(204);
    const reply = await get(hub, 'consumer/RequestStateObjects', consumer(), { sentinel: 'S1', package: 'P1' });
    expect(reply.json()).toMatchObject([{ Name: 'Small', Value: 1 }]);
  });

  it('a client that goes on sending after the 413 sends all of it unhindered; the hub closes once it has', async () => {
    const client = await slowSender(hub, 16 * 1024 * 1024, { 'Content-Length': String(16 * 1024 * 1024) });
    expect(client.answer).toMatch(/^HTTP\/1\.1 413 .*"Code":"BodyTooLarge"}$/s);
    expect(client.answer).toMatch(/\r\nConnection: close\r\n/i);
    // Closing on the unread body made the kernel reset the connection: the client's writes failed (EPIPE).
    expect(client.error).toBeUndefined();
    expect(client.sent).toBe(16 * 1024 * 1024);
  });

  it('a chunked body past the limit: 413, and the rest is read and discarded as well', async () => {
    const client = await slowSender(hub, 16 * 1024 * 1024, { 'Transfer-Encoding': 'chunked' });
    expect(client.answer).toMatch(/^HTTP\/1\.1 413 .*"Code":"BodyTooLarge"}$/s);
    expect(client.error).toBeUndefined();
    expect(client.sent).toBe(16 * 1024 * 1024);
  });

  it(`a client that never stops sending is cut off after ${LINGER_BYTES / 1024 / 1024} MiB more`, async () => {
    const client = await slowSender(hub, 4 * LINGER_BYTES, { 'Content-Length': String(4 * LINGER_BYTES) });
    expect(client.answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(client.error).toMatch(/EPIPE|ECONNRESET/);
    expect(client.sent).toBeLessThan(4 * LINGER_BYTES);
  });
});

interface SlowSender {
  answer: string;
  sent: number;
  error: string | undefined;
}

/**
 * A raw keep-alive connection that POSTs `total` bytes in 64 KiB writes, as a client on a real network
 * does, goes on writing after the answer (HTTP/1.1 clients send the whole body), ends its side once all
 * is sent and resolves when the connection is closed.
 */
function slowSender(hub: TestHub, total: number, headers: Record<string, string>): Promise<SlowSender> {
  const chunked = headers['Transfer-Encoding'] === 'chunked';
  const url = new URL(`${hub.url}/rest/platform/PushStateObject`);
  for (const [k, v] of Object.entries(pkg('S1', 'P1'))) url.searchParams.set(k, v);
  const head = [
    `POST ${url.pathname}${url.search} HTTP/1.1`,
    `Host: ${url.host}`,
    'Content-Type: application/json',
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    '',
    '',
  ].join('\r\n');
  const piece = Buffer.alloc(64 * 1024, 'x');
  const framed = chunked
    ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')])
    : piece;
  return new Promise((resolve) => {
    const result: SlowSender = { answer: '', sent: 0, error: undefined };
    const socket = net.connect({ host: '127.0.0.1', port: Number(url.port), allowHalfOpen: true });
    socket.on('data', (chunk: Buffer) => (result.answer += chunk.toString()));
    socket.on('error', (error: NodeJS.ErrnoException) => (result.error ??= error.code));
    socket.on('close', () => resolve(result));
    socket.write(head);
    const writeMore = () => {
      if (socket.destroyed) return;
      if (result.sent >= total) {
        socket.end(chunked ? '0\r\n\r\n' : '');
        return;
      }
      result.sent += piece.length;
      // Paced by the socket: the next write once this one is handed to the kernel.
      socket.write(framed, () => setImmediate(writeMore));
    };
    writeMore();
  });
}
