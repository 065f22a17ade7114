/** The sweeper's operations on SQLite (the Housekeeping of engine.ts), each one transaction. */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { readHubSetting, writeHubSetting } from './configuration.js';
import type { ExpiredSubscription, Housekeeping } from './engine.js';
import { HEARTBEAT_KEY, shiftSubscriptionActivity, sweepSubscriptions } from './subscriptions.js';

export class HousekeepingStore implements Housekeeping {
  constructor(private readonly db: Kysely<Database>) {}

  discountDowntime(now: number): Promise<void> {
    return this.db.transaction().execute(async (trx) => {
      const last = await readHubSetting(trx, HEARTBEAT_KEY);
      if (last !== undefined && now > Number(last)) await shiftSubscriptionActivity(trx, now - Number(last));
      await writeHubSetting(trx, HEARTBEAT_KEY, String(now));
    });
  }

  sweepSubscriptions(now: number, idleCutoff: number, keep: string[], tombstoneCutoff: number): Promise<ExpiredSubscription[]> {
    return sweepSubscriptions(this.db, now, idleCutoff, keep, tombstoneCutoff);
  }

  heartbeat(now: number): Promise<void> {
    return writeHubSetting(this.db, HEARTBEAT_KEY, String(now));
  }
}
