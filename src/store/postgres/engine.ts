/**
 * The PostgreSQL engine's ports built so far, over one pool (issue 22). Not a HubStore yet: createHub
 * chooses PostgreSQL only once every port exists (docs/operations.md, "Several processes on
 * PostgreSQL"); until then the contract tests open this.
 */
import type { CallerStore } from '../../hub/ports/callers.js';
import type { MessageStore } from '../../hub/ports/messages.js';
import type { StateObjectStore } from '../../hub/ports/stateObjects.js';
import type { SubscriptionStore } from '../../hub/ports/subscriptions.js';
import { PostgresCallerStore } from './callers.js';
import { notifyCommitted } from './listener.js';
import type { MessageRetention } from './messages.js';
import { PostgresMessageStore } from './messages.js';
import { migratePostgres } from './migrate.js';
import type { PostgresLog } from './pool.js';
import { createPool, openPostgres } from './pool.js';
import { PostgresStateObjectStore } from './stateObjects.js';
import { PostgresSubscriptionStore } from './subscriptions.js';

export interface PostgresEngineOptions {
  url: string;
  sync: 'normal' | 'full';
  lockWaitMs: number;
  messageRetention: MessageRetention;
  maxSubscriptionsPerCredential: number;
  /** Connections of the pool (HUB_PG_POOL_MAX); default 8. */
  poolMax?: number;
  log: PostgresLog;
}

export interface PostgresEngine {
  stateObjects: StateObjectStore;
  messages: MessageStore;
  subscriptions: SubscriptionStore;
  callers: CallerStore;
  close(): Promise<void>;
}

/** Migrates (safe with several processes at once), then builds the ports over one pool. */
export async function openPostgresEngine(options: PostgresEngineOptions): Promise<PostgresEngine> {
  const { db } = openPostgres({ url: options.url, role: 'migrate', sync: options.sync, lockWaitMs: options.lockWaitMs, log: options.log, max: 1 });
  await migratePostgres(db).finally(() => db.destroy());
  const pool = createPool({ url: options.url, role: 'store', sync: options.sync, lockWaitMs: options.lockWaitMs, log: options.log, max: options.poolMax });
  const announce = (client: Parameters<typeof notifyCommitted>[0]) => notifyCommitted(client);
  return {
    stateObjects: new PostgresStateObjectStore({ pool, log: options.log, announce }),
    messages: new PostgresMessageStore({ pool, log: options.log, retention: options.messageRetention, announce }),
    subscriptions: new PostgresSubscriptionStore(pool, options.maxSubscriptionsPerCredential),
    callers: new PostgresCallerStore(pool),
    close: () => pool.end(),
  };
}
