/**
 * The SQLite store's takes from memory (src/store/sqlite/takes/takeMemory.ts, messageMemory.ts) against
 * the file, under random work: seeded rounds of pushes, purges, expiries, sweeps, subscribing, takes
 * with every kind of claim and limit, settling, removing, message sends (a refused saga reply among
 * them, which rolls its batch back) and group joins, several at once so that they share group commits.
 * The suite runs with HUB_TEST_VERIFY_TAKES=1: every take from memory also reads the file, and any
 * difference fails the round it happened in.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ScopeType } from '../src/hub/scope.js';
import { createLogger } from '../src/logger.js';
import { openSqliteHubStore } from '../src/store/sqlite/hubStore.js';
import { takeMemoryDifferences, takesFromMemory } from '../src/store/sqlite/takes/verifyTakes.js';
import { tempDir } from './support/afterFile.js';
import { claim, consumerApp, messageFrom, packageS1P1, patterns, signal, write } from './support/storeTakes.js';

/** A small seeded generator (LCG): the same seed, the same rounds. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const NAMES = ['A', 'B', 'C', 'D', 'E', 'F'];
const verdicts = ['wait', 'redeliver', 'delivered', 'delivered', 'delivered'] as const;

describe('takes from memory under random work', () => {
  for (let seed = 1; seed <= 20; seed++) {
    it(`answer as the file does (seed ${seed})`, async () => {
      const store = await openSqliteHubStore({
        file: path.join(tempDir(), 'hub.db'),
        sync: 'normal',
        lockWaitMs: 1000,
        messageRetention: { count: 7, ms: 3_600_000 },
        maxSubscriptionsPerCredential: 12,
        vacuumIntervalMs: 3_600_000,
        logger: createLogger('silent'),
      });
      try {
        const r = random(seed);
        const pick = <T>(a: readonly T[]) => a[Math.floor(r() * a.length)];
        const owner = { connectionId: await store.callers.record(consumerApp()), credentialName: 'cred' };
        const producer = await store.callers.record(packageS1P1());
        const send = messageFrom({ connectionId: producer, friendlyName: 'S1/P1' });
        const stateObjectIds: string[] = [];
        const messageIds: string[] = [];
        const pending: Record<string, string[]> = {};
        let n = 0;
        const answeredBefore = takesFromMemory();
        for (let round = 0; round < 300; round++) {
          const work: Promise<unknown>[] = [];
          // Refusals (a saga reply without a request, too many subscriptions) are part of the work.
          const run = (p: Promise<unknown>) => work.push(p.catch(() => undefined));
          for (let k = 1 + Math.floor(r() * 8); k > 0; k--) {
            const x = r();
            const now = Date.now();
            const someId = (ids: string[]) => (ids.length > 0 && r() < 0.9 ? pick(ids) : undefined);
            /** Records a subscription opened, once. */
            const opened = (ids: string[]) => (o: { id: string }) => {
              if (!ids.includes(o.id)) ids.push(o.id);
            };
            /** A take's claim (none at times), its token kept as pending when the take delivered. */
            const claimed = (id: string) => {
              const token = `t${n++}`;
              const by = r() < 0.3 ? undefined : claim(token, pick(verdicts));
              const delivered = (count: number) => {
                if (by && count > 0) (pending[id] ??= []).push(token);
              };
              return { by, delivered };
            };
            if (x < 0.3) {
              const expires = r() < 0.1;
              const extra = { sentinelName: r() < 0.8 ? 'S1' : 'S2', lifetimeS: expires ? 1 : 0 };
              run(
                store.stateObjects.push(write(pick(NAMES), n++, { ...extra, expiresAtMs: expires ? now - 1 : null })),
              );
            } else if (x < 0.31) {
              const name = r() < 0.5 ? pick(NAMES) : '*';
              run(store.stateObjects.purge({ sentinelName: 'S1', packageName: 'P1' }, { name, type: '*' }));
            } else if (x < 0.32) {
              run(store.stateObjects.expire(now));
            } else if (x < 0.33) {
              run(store.stateObjects.sweep(r() < 0.5 ? 0 : now + 10));
            } else if (x < 0.45) {
              const name = r() < 0.95 ? pick(NAMES) : pick(['*', 'A*', 'B?']);
              const filter = r() < 0.95 ? patterns(name) : patterns(name, { sentinel: 'S1' });
              run(
                store.subscriptions
                  .openStateObjects(owner, someId(stateObjectIds), filter)
                  .then(opened(stateObjectIds)),
              );
            } else if (x < 0.7 && stateObjectIds.length > 0) {
              const id = pick(stateObjectIds);
              const { by, delivered } = claimed(id);
              const abort = new AbortController();
              if (r() < 0.01) abort.abort();
              run(
                store.stateObjects
                  .take(id, pick([0, 0, 1, 2]), abort.signal, by)
                  .then((t) => delivered(t.objects.length)),
              );
            } else if (x < 0.75 && stateObjectIds.length > 0) {
              const id = pick(stateObjectIds);
              const token = pending[id]?.pop();
              if (token) run(store.subscriptions.settle(id, token, r() < 0.5));
            } else if (x < 0.755 && stateObjectIds.length > 0) {
              run(store.subscriptions.removeOwned(owner, [pick(stateObjectIds)]));
            } else if (x < 0.76) {
              run(store.subscriptions.sweep(now, r() < 0.5 ? now + 1 : 0, []));
            } else if (x < 0.86) {
              const scope = pick([ScopeType.All, ScopeType.Package, ScopeType.Group]);
              const to = scope === ScopeType.Package ? ['Consumer/App', 'Other/X'] : ['G1', 'G2'];
              const args = scope === ScopeType.All ? '[]' : JSON.stringify([pick(to)]);
              const refused = r() < 0.01;
              const message = send(`m${n++}`, {
                scope,
                args,
                sagaId: refused ? 'saga' : null,
                key: refused ? '__Response' : 'K',
              });
              run(store.messages.send(message, refused ? { sagaReplyBy: producer } : {}));
            } else if (x < 0.9) {
              const group = r() < 0.5 ? pick(['G1', 'G2']) : undefined;
              run(store.subscriptions.openMessages(owner, someId(messageIds), group).then(opened(messageIds)));
            } else if (x < 0.98 && messageIds.length > 0) {
              const id = pick(messageIds);
              const { by, delivered } = claimed(id);
              run(store.messages.take(id, pick([0, 1, 2]), signal(), by).then((t) => delivered(t.messages.length)));
            } else if (x < 0.985 && stateObjectIds.length > 0) {
              const id = pick(stateObjectIds);
              run(store.subscriptions.findOwned(owner, id, 'state_objects', claim(`f${n++}`, pick(verdicts))));
            } else if (x < 0.99) {
              run(store.subscriptions.consumeWritten('', []));
            } else {
              run(store.messages.sweep(Date.now()));
            }
          }
          await Promise.all(work);
          expect(takeMemoryDifferences(), `round ${round}`).toEqual([]);
        }
        expect(takesFromMemory() - answeredBefore).toBeGreaterThan(20);
      } finally {
        await store.close();
      }
    });
  }
});
