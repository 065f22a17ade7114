/**
 * `/ready` follows the database (issue 22): on a throwaway cluster of this file's own, a hub answers
 * 503 with its reason while PostgreSQL is stopped and 200 again once it runs, without a restart of the
 * hub; `/health` answers throughout (the process is up).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHub } from './support/testHub.js';
import type { TestHub } from './support/testHub.js';
import { throwawayCluster, throwawayClusterPossible } from './support/postgres.js';
import type { ThrowawayCluster } from './support/postgres.js';

const possible = throwawayClusterPossible();

/** The /ready answer once it is `status` (the hub keeps its last answer for about a second). */
async function readyOnce(hub: TestHub, status: number): Promise<unknown> {
  for (;;) {
    const response = await fetch(`${hub.url}/ready`);
    if (response.status === status) return response.json();
    await sleep(100);
  }
}

describe.skipIf(!possible)('/ready while PostgreSQL stops and starts again', () => {
  let cluster: ThrowawayCluster;
  let hub: TestHub;
  beforeAll(async () => {
    cluster = await throwawayCluster();
    hub = await startTestHub({ options: { databaseUrl: cluster.url } });
  }, 120_000);
  afterAll(async () => {
    await hub?.stop();
    await cluster?.destroy();
  });

  it('is 503 saying why while the database is down, and 200 again by itself once it is back', async () => {
    expect(await readyOnce(hub, 200)).toEqual({ Status: 'ready' });
    await cluster.stop('fast');
    expect(await readyOnce(hub, 503)).toEqual({ Status: 'not ready', Reason: 'database unreachable' });
    expect((await fetch(`${hub.url}/health`)).status).toBe(200);
    await cluster.start();
    expect(await readyOnce(hub, 200)).toEqual({ Status: 'ready' });
  }, 120_000);
});
