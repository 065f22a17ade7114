/** The verdict on a pending delivery a take finds: a pure function of the take's claim (data) and the delivery. */
import { describe, expect, it } from 'vitest';
import type { DeliveryClaim } from '../src/hub/ports/deliveryClaim.js';
import { judgePending, pendingVerdict } from '../src/hub/ports/deliveryClaim.js';

const claim = (extra: Partial<DeliveryClaim> = {}): DeliveryClaim => ({
  token: 'life:9',
  life: 'life:',
  answering: new Map(),
  unsent: new Set(),
  lostAfterMs: 2_000,
  ...extra,
});

describe('pendingVerdict', () => {
  it('reads on past its own earlier take and past anything without a claim', () => {
    expect(pendingVerdict(claim(), { token: 'life:9', sinceMs: 0 }, 0)).toBe('delivered');
    expect(pendingVerdict(undefined, { token: 'other:1', sinceMs: 0 }, 0)).toBe('delivered');
  });

  it("waits for this life's answer under way until it is written", () => {
    const answering = new Map([['life:1', { written: false }]]);
    expect(pendingVerdict(claim({ answering }), { token: 'life:1', sinceMs: 0 }, 0)).toBe('wait');
    answering.set('life:1', { written: true });
    expect(pendingVerdict(claim({ answering }), { token: 'life:1', sinceMs: 0 }, 0)).toBe('delivered');
  });

  it("reads on past this life's ended answers, and again those whose cursors failed to go back", () => {
    expect(pendingVerdict(claim(), { token: 'life:2', sinceMs: 0 }, 0)).toBe('delivered');
    expect(pendingVerdict(claim({ unsent: new Set(['life:2']) }), { token: 'life:2', sinceMs: 0 }, 0)).toBe(
      'redeliver',
    );
  });

  it("reads another life's delivery again once lost: after lostAfterMs, or at once with 0", () => {
    const pending = { token: 'other:1', sinceMs: 10_000 };
    expect(pendingVerdict(claim(), pending, 11_999)).toBe('wait');
    expect(pendingVerdict(claim(), pending, 12_000)).toBe('redeliver');
    expect(pendingVerdict(claim({ lostAfterMs: 0 }), pending, 0)).toBe('redeliver');
  });

  it('judgePending: none without a pending token; otherwise the delivery with its verdict', () => {
    expect(judgePending(claim(), null, null, 0)).toBeUndefined();
    expect(judgePending(claim(), 'other:1', null, 2_000)).toEqual({
      token: 'other:1',
      sinceMs: 0,
      verdict: 'redeliver',
    });
  });
});
