/** The notifier decides in memory which waiting polls a change concerns, and wakes only those. */
import { describe, expect, it } from 'vitest';
import { Notifier } from '../src/hub/polls/notifier.js';
import { isAddressedTo } from '../src/hub/messageAddresses.js';
import type { MessageAddresses } from '../src/hub/messageAddresses.js';
import type { StateObjectPatterns } from '../src/hub/ports/stateObjectPatterns.js';

const filter = (name: string, extra: Partial<StateObjectPatterns> = {}): StateObjectPatterns => ({
  sentinel: '*',
  package: '*',
  name,
  type: '*',
  ...extra,
});
const addresses = (connectionId: string, extra: Partial<MessageAddresses> = {}): MessageAddresses => ({
  connectionId,
  friendlyName: `Consumer/${connectionId}`,
  isPackage: false,
  sentinelName: 'Consumer',
  packageName: connectionId,
  groups: new Map(),
  ...extra,
});

/** Registers waiters with `setup`, runs `act`, and returns the keys whose waiters were woken. */
async function wokenKeys(
  setup: (n: Notifier) => Map<string, ReturnType<Notifier['register']>>,
  act: (n: Notifier) => void,
): Promise<string[]> {
  const notifier = new Notifier();
  const waiters = setup(notifier);
  act(notifier);
  const abort = new AbortController().signal;
  const outcomes = await Promise.all(
    [...waiters].map(async ([key, waiter]) => [key, await waiter.wait(1, abort)] as const),
  );
  return outcomes
    .filter(([, outcome]) => outcome === 'woken')
    .map(([key]) => key)
    .sort();
}

describe('notifier', () => {
  it('wakes StateObject polls by exact name and by wildcard, and no others', async () => {
    const keys = await wokenKeys(
      (n) =>
        new Map([
          ['exact', n.register('exact', { kind: 'state_objects', filters: [filter('Temp')] })],
          ['other', n.register('other', { kind: 'state_objects', filters: [filter('Humidity')] })],
          ['wild', n.register('wild', { kind: 'state_objects', filters: [filter('Te*')] })],
          [
            'wrongPackage',
            n.register('wrongPackage', { kind: 'state_objects', filters: [filter('Temp', { package: 'P2' })] }),
          ],
          ['messages', n.register('messages', { kind: 'messages', addresses: addresses('m') })],
        ]),
      (n) => n.stateObjectChanged({ sentinelName: 'S1', packageName: 'P1', name: 'Temp', type: 'System.Int64' }),
    );
    expect(keys).toEqual(['exact', 'wild']);
  });

  it('wakes message polls by address: All, Others but the sender, Package by friendly name, Group', async () => {
    const setup = (n: Notifier) =>
      new Map([
        ['a', n.register('a', { kind: 'messages', addresses: addresses('a') })],
        ['b', n.register('b', { kind: 'messages', addresses: addresses('b', { groups: new Map([['Lights', 0]]) }) })],
        ['so', n.register('so', { kind: 'state_objects', filters: [filter('*')] })],
      ]);
    expect(
      await wokenKeys(setup, (n) => n.messageSent({ id: 1, scope: 5, args: [], senderConnectionId: 'x' })),
    ).toEqual(['a', 'b']);
    expect(
      await wokenKeys(setup, (n) => n.messageSent({ id: 1, scope: 4, args: [], senderConnectionId: 'a' })),
    ).toEqual(['b']);
    expect(
      await wokenKeys(setup, (n) => n.messageSent({ id: 1, scope: 2, args: ['Consumer/a'], senderConnectionId: 'x' })),
    ).toEqual(['a']);
    expect(
      await wokenKeys(setup, (n) => n.messageSent({ id: 1, scope: 1, args: ['Lights'], senderConnectionId: 'x' })),
    ).toEqual(['b']);
  });

  it('wakes every poll waiting under a shared name or address, and only those left after a release', async () => {
    // Keys with one waiting poll index it directly, with several a Set: both ways and the switch between them.
    let released = false;
    const setup = (n: Notifier) => {
      const waiters = new Map([
        ['t1', n.register('t1', { kind: 'state_objects', filters: [filter('Temp'), filter('Temp'), filter('Hum')] })],
        ['t2', n.register('t2', { kind: 'state_objects', filters: [filter('Temp')] })],
        ['t3', n.register('t3', { kind: 'state_objects', filters: [filter('Temp', { type: 'Other' })] })],
        ['m1', n.register('m1', { kind: 'messages', addresses: addresses('m1', { groups: new Map([['G', 0]]) }) })],
        ['m2', n.register('m2', { kind: 'messages', addresses: addresses('m2', { groups: new Map([['G', 0]]) }) })],
      ]);
      if (released) {
        n.release('t2', waiters.get('t2') as ReturnType<Notifier['register']>);
        n.release('m1', waiters.get('m1') as ReturnType<Notifier['register']>);
        waiters.delete('t2');
        waiters.delete('m1');
      }
      return waiters;
    };
    const changed = (n: Notifier) =>
      n.stateObjectChanged({ sentinelName: 'S1', packageName: 'P1', name: 'Temp', type: 'System.Int64' });
    const toGroup = (n: Notifier) => n.messageSent({ id: 1, scope: 1, args: ['G'], senderConnectionId: 'x' });
    expect(await wokenKeys(setup, changed)).toEqual(['t1', 't2']);
    expect(await wokenKeys(setup, toGroup)).toEqual(['m1', 'm2']);
    released = true;
    expect(await wokenKeys(setup, changed)).toEqual(['t1']);
    expect(await wokenKeys(setup, toGroup)).toEqual(['m2']);
    expect(
      await wokenKeys(setup, (n) =>
        n.stateObjectChanged({ sentinelName: 'S1', packageName: 'P1', name: 'Hum', type: 'T' }),
      ),
    ).toEqual(['t1']);
  });

  it('forgets a released waiter and its index entries', () => {
    const n = new Notifier();
    const waiter = n.register('k', { kind: 'state_objects', filters: [filter('Temp')] });
    n.release('k', waiter);
    expect(n.waitingCount).toBe(0);
    n.stateObjectChanged({ sentinelName: 'S', packageName: 'P', name: 'Temp', type: 'T' });
  });
  it('tells a write whether it woke a poll, and wokenAnswered waits for what the wake set off', async () => {
    const n = new Notifier();
    const waiter = n.register('k', { kind: 'state_objects', filters: [filter('Temp')] });
    const abort = new AbortController().signal;
    const steps: string[] = [];
    // A woken poll's continuation: a few promise hops (its read, its answer) after the wake.
    const poll = waiter.wait(1000, abort).then(async (outcome) => {
      for (let i = 0; i < 5; i++) await Promise.resolve();
      steps.push(`answered ${outcome}`);
    });
    expect(n.stateObjectChanged({ sentinelName: 'S', packageName: 'P', name: 'Other', type: 'T' })).toBe(false);
    expect(n.stateObjectChanged({ sentinelName: 'S', packageName: 'P', name: 'Temp', type: 'T' })).toBe(true);
    await n.wokenAnswered();
    steps.push('publisher answered');
    await poll;
    expect(steps).toEqual(['answered woken', 'publisher answered']);
    expect(n.messageSent({ id: 1, scope: 5, args: [], senderConnectionId: 'x' })).toBe(false);
  });
});

describe('one poll per subscription across processes (claims)', () => {
  const abort = new AbortController().signal;
  const interest = { kind: 'messages' as const, addresses: addresses('m') };
  /** What the wait says when it is asked right away (a superseded waiter answers at once). */
  const outcome = (waiter: ReturnType<Notifier['register']>) => waiter.wait(1, abort);

  it('a later claim of the key elsewhere supersedes the poll; an earlier or equal one (its own) does not', async () => {
    const n = new Notifier();
    const waiter = n.register('s', interest);
    n.ordered('s', waiter, 5);
    n.claimedElsewhere('s', 5);
    n.claimedElsewhere('s', 4);
    expect(n.isWaiting('s')).toBe(true);
    n.claimedElsewhere('s', 6);
    expect(n.isWaiting('s')).toBe(false);
    expect(await outcome(waiter)).toBe('superseded');
  });

  it('a claim heard before the poll knows its own order counts once the order is known, if it is later', async () => {
    const n = new Notifier();
    const older = n.register('older', interest);
    const newer = n.register('newer', interest);
    n.claimedElsewhere('older', 8);
    n.claimedElsewhere('newer', 8);
    n.ordered('newer', newer, 9);
    expect(n.isWaiting('newer')).toBe(true);
    n.ordered('older', older, 7);
    expect(n.isWaiting('older')).toBe(false);
    expect(await outcome(older)).toBe('superseded');
  });

  it("a superseded waiter's release leaves the poll registered after it alone", () => {
    const n = new Notifier();
    const first = n.register('s', interest);
    n.ordered('s', first, 1);
    n.claimedElsewhere('s', 2);
    const second = n.register('s', interest);
    n.release('s', first);
    expect(n.isWaiting('s')).toBe(true);
    n.release('s', second);
    expect(n.isWaiting('s')).toBe(false);
  });

  it('lists the polls that have waited since before a time', () => {
    const n = new Notifier();
    n.register('s', interest);
    expect(n.waitingSince(Date.now() + 1)).toEqual(['s']);
    expect(n.waitingSince(0)).toEqual([]);
  });
});

describe('message addressing', () => {
  it('reaches a joined group only with messages sent after the join', () => {
    const to = addresses('a', { groups: new Map([['Kitchen', 10]]) });
    expect(isAddressedTo({ id: 10, scope: 1, args: ['Kitchen'], senderConnectionId: 'x' }, to)).toBe(false);
    expect(isAddressedTo({ id: 11, scope: 1, args: ['Kitchen'], senderConnectionId: 'x' }, to)).toBe(true);
  });

  it('reaches packages by bare package name, consumers only by friendly name or ConnectionId', () => {
    const pkg = addresses('c1', { friendlyName: 'S1/P1', isPackage: true, sentinelName: 'S1', packageName: 'P1' });
    const consumer = addresses('c2', { packageName: 'P1' });
    const byName = { id: 1, scope: 2, args: ['P1'], senderConnectionId: 'x' };
    expect([isAddressedTo(byName, pkg), isAddressedTo(byName, consumer)]).toEqual([true, false]);
    expect(isAddressedTo({ id: 1, scope: 3, args: ['S1'], senderConnectionId: 'x' }, pkg)).toBe(true);
  });
});
