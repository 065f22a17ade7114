/**
 * The error catalogue (src/errors.ts) and its statuses (src/http/errorMapping.ts): every code has a
 * status, a message and a row in docs/api.md, and refusals from each layer reach the wire with their code.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERRORS, hubError, type ErrorCode } from '../src/errors.js';
import { ERROR_STATUS } from '../src/http/errorMapping.js';
import { consumer, get, hubsStoppedAfterEach, idOf, post } from './support/testHub.js';

const codes = Object.keys(ERRORS) as ErrorCode[];

/** Facts that name themselves: `{ parameter }` reads as `‹parameter›`, so a message shows every fact it uses. */
const namedFacts = new Proxy({}, { get: (_target, name) => (typeof name === 'string' ? `‹${name}›` : undefined) });

describe('the error catalogue', () => {
  it('gives every code a status in the HTTP layer, and the HTTP layer knows no other code', () => {
    expect(Object.keys(ERROR_STATUS).sort()).toEqual([...codes].sort());
    for (const code of codes) {
      expect(ERROR_STATUS[code], code).toBeGreaterThanOrEqual(400);
      expect(ERROR_STATUS[code], code).toBeLessThan(600);
    }
  });

  it('gives every code a message: a sentence, whatever facts it is given', () => {
    for (const code of codes) {
      const { message } = ERRORS[code];
      const text = typeof message === 'function' ? (message as (facts: unknown) => string)(namedFacts) : message;
      expect(text, code).toMatch(/^\S.*\.$/);
      expect(text, code).not.toMatch(/undefined|\[object/);
    }
  });

  it('builds the error from the code: the catalogue wording, the facts, and a detail that replaces the default', () => {
    const lost = hubError('SubscriptionNotFound', { id: 'abc' });
    expect([lost.code, lost.message, lost.detail]).toEqual([
      'SubscriptionNotFound',
      "The subscription 'abc' does not exist or has expired.",
      'Subscribe again to receive updates.',
    ]);
    const denied = hubError('AccessDenied');
    expect([denied.message, denied.detail]).toEqual(['Authorization has been denied for this request.', undefined]);
    expect(hubError('MessageNotAuthorized', 'rule 1').detail).toBe('rule 1');
    expect(hubError('DatabaseBusy', { engine: 'SQLite' }, 'now').detail).toBe('now');
  });

  it('lists every code with its status in docs/api.md, and no other', () => {
    const api = fs.readFileSync(path.join(import.meta.dirname, '..', 'docs', 'api.md'), 'utf8');
    const rows = [...api.matchAll(/^\| `(\w+)` \| (\d{3}) \|/gm)].map((m) => [m[1], Number(m[2])]);
    expect(Object.fromEntries(rows)).toEqual(ERROR_STATUS);
    expect(rows).toHaveLength(codes.length);
  });
});

describe('the code on the wire', () => {
  const hub = hubsStoppedAfterEach();
  type Body = { Message: string; MessageDetail?: string; Code: string };

  it('carries the code next to Message and MessageDetail, from the HTTP layer, the hub and the store alike', async () => {
    const h = await hub({ options: { maxSubscriptionsPerCredential: 1 } });
    const answers = {
      wrongKey: await get(h, 'consumer/CheckAccess', consumer('App', 'wrong-key-0001')),
      unknownAction: await get(h, 'consumer/Nope', consumer()),
      badTimeout: await get(h, 'consumer/GetMessages', consumer(), {
        subscriptionId: '00000000-0000-0000-0000-000000000000',
        timeout: 'soon',
      }),
      badBody: await post(h, 'consumer/SendMessage', consumer(), { Scope: { Scope: 'All' } }),
      lostSubscription: await get(h, 'consumer/GetMessages', consumer(), {
        subscriptionId: '00000000-0000-0000-0000-000000000000',
        timeout: 0,
      }),
    };
    idOf(await get(h, 'consumer/SubscribeToMessage', consumer('A')));
    const overLimit = await get(h, 'consumer/SubscribeToMessage', consumer('B'));
    const seen = Object.fromEntries(
      Object.entries({ ...answers, overLimit }).map(([name, reply]) => [name, [reply.status, reply.json<Body>().Code]]),
    );
    expect(seen).toEqual({
      wrongKey: [403, 'AccessDenied'],
      unknownAction: [404, 'NotFound'],
      badTimeout: [400, 'InvalidParameter'],
      badBody: [400, 'InvalidBody'],
      lostSubscription: [500, 'SubscriptionNotFound'],
      overLimit: [429, 'TooManySubscriptions'],
    });
    // The fields in the order Constellation's body has them, the code last.
    expect(Object.keys(answers.lostSubscription.json<Body>())).toEqual(['Message', 'MessageDetail', 'Code']);
    expect(answers.wrongKey.text).toBe(
      '{"Message":"Authorization has been denied for this request.","Code":"AccessDenied"}',
    );
  });
});
