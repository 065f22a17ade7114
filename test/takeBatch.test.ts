/**
 * The scheduling of PostgreSQL's take batches (src/store/postgres/connections/takeBatch.ts), its `run` a function
 * the test answers when it chooses: a wake-up larger than one batch has two batches in flight at once
 * (the second's round trips go while the first's answers are written), a third waits for one of them,
 * and a subscription in a batch in flight never joins another at once.
 */
import { describe, expect, it } from 'vitest';
import { TakeBatch } from '../src/store/postgres/connections/takeBatch.js';

interface Run {
  items: string[];
  finish(): void;
}

/** A TakeBatch of `maxItems` whose runs wait until the test finishes them; items are `subscription:n`. */
function batches(maxItems: number) {
  const runs: Run[] = [];
  const takes = new TakeBatch<string, string>({
    maxItems,
    run: (items) =>
      new Promise((resolve) => runs.push({ items, finish: () => resolve(items.map((i) => `took ${i}`)) })),
    runAlone: (item) => Promise.resolve(`alone ${item}`),
    subscriptionOf: (item) => item.split(':')[0],
  });
  return { takes, runs };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('take batches in flight', () => {
  it('a wake-up of three batches runs two at once, the third after one of them', async () => {
    const { takes, runs } = batches(2);
    const results = ['a:1', 'b:1', 'c:1', 'd:1', 'e:1'].map((item) => takes.submit(item));
    await turn();
    expect(runs.map((r) => r.items)).toEqual([
      ['a:1', 'b:1'],
      ['c:1', 'd:1'],
    ]);
    runs[1].finish();
    await expect(results[2]).resolves.toBe('took c:1');
    await turn();
    expect(runs.map((r) => r.items)).toEqual([['a:1', 'b:1'], ['c:1', 'd:1'], ['e:1']]);
    runs[0].finish();
    runs[2].finish();
    expect(await Promise.all(results)).toEqual(['took a:1', 'took b:1', 'took c:1', 'took d:1', 'took e:1']);
  });

  it('a later take of a subscription in a batch in flight waits for that batch to end', async () => {
    const { takes, runs } = batches(2);
    const results = ['a:1', 'a:2', 'a:3'].map((item) => takes.submit(item));
    await turn();
    // Room for a second batch, but every waiting take is of the subscription in flight.
    expect(runs.map((r) => r.items)).toEqual([['a:1']]);
    runs[0].finish();
    await results[0];
    await turn();
    expect(runs.map((r) => r.items)).toEqual([['a:1'], ['a:2']]);
    runs[1].finish();
    await results[1];
    await turn();
    runs[2].finish();
    expect(await Promise.all(results)).toEqual(['took a:1', 'took a:2', 'took a:3']);
  });
});
