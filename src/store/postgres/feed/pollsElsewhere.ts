/**
 * What one hub process's polls tell the others' on one PostgreSQL (issue 22; hub/polls/wakeUps.ts
 * PollsElsewhere), each on a NOTIFY channel of its own, heard through the process's listener:
 *
 * - `hub_poll`: a poll registered here takes its order from the sequence `poll_order` (cheap, no row
 *   lock; `cache 1`, so numbers follow the order of the calls across sessions) and announces
 *   (subscription id, order). Every process, this one included, ends its own poll of that subscription
 *   when that poll's order is lower (notifier.ts `claimedElsewhere`): two simultaneous polls never end
 *   each other, and the newest stays. Claims made in the same turn share one statement and one
 *   notification (at most CLAIMS_PER_NOTICE each, under PostgreSQL's 8,000-byte payload).
 * - `hub_interest`: a filter or group was added (committed) to a subscription here; a process where a
 *   poll of it waits reads what it listens for again and wakes it (hub/polls/subscriptions.ts). A process
 *   ignores its own notices (a token per process).
 *
 * A lost notice (the listener reconnecting) is tolerated: an older poll then waits to its timeout as
 * before, a poll listens for its old filters until it polls again. A claim that fails is logged; its
 * poll stays unordered (never ended by another process).
 */
import { randomUUID } from 'node:crypto';
import type { InterestChange, PollsElsewhere } from '../../../hub/ports/pollsElsewhere.js';
import type pg from 'pg';
import type { PostgresLog } from '../connections/pool.js';

export const POLL_CHANNEL = 'hub_poll';
export const INTEREST_CHANNEL = 'hub_interest';
const CLAIMS_PER_NOTICE = 100;

interface Claim {
  key: string;
  resolve(order: number): void;
  reject(error: unknown): void;
}

/** The notices' sending side and what to do with what is heard; `hear` is handed to the listener. */
export class PostgresPollsElsewhere implements PollsElsewhere {
  readonly #token = randomUUID();
  #queue: Claim[] = [];
  #flushing = false;
  #hearChanged: ((change: InterestChange) => void) | undefined;

  constructor(
    private readonly db: pg.Pool,
    private readonly log: PostgresLog,
    /** Gets every process's claims, this one's included (the notifier's `claimedElsewhere`). */
    private readonly claimed: (key: string, order: number) => void,
  ) {}

  claim(key: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ key, resolve, reject });
      if (!this.#flushing) {
        this.#flushing = true;
        setImmediate(() => void this.#flush());
      }
    });
  }

  changed(change: InterestChange): void {
    const payload = JSON.stringify({
      from: this.#token,
      id: change.id,
      kind: change.kind,
      connectionId: change.owner.connectionId,
      credential: change.owner.credentialName,
    });
    this.db.query('select pg_notify($1, $2)', [INTEREST_CHANNEL, payload]).catch((error: unknown) => {
      this.log.warn(
        { subscription: change.id, err: (error as Error).message },
        'could not tell the other hub processes about a changed subscription',
      );
    });
  }

  onChanged(hear: (change: InterestChange) => void): void {
    this.#hearChanged = hear;
  }

  /** The handlers of both channels, for the listener. */
  get channels(): Record<string, (payload: string) => void> {
    return {
      [POLL_CHANNEL]: (payload) => {
        for (const [key, order] of JSON.parse(payload) as [string, number][]) this.claimed(key, order);
      },
      [INTEREST_CHANNEL]: (payload) => {
        const notice = JSON.parse(payload) as {
          from: string;
          id: string;
          kind: InterestChange['kind'];
          connectionId: string;
          credential: string;
        };
        if (notice.from === this.#token) return;
        this.#hearChanged?.({
          id: notice.id,
          kind: notice.kind,
          owner: { connectionId: notice.connectionId, credentialName: notice.credential },
        });
      },
    };
  }

  /** One statement per CLAIMS_PER_NOTICE claims queued, one after the other, until none is left. */
  async #flush(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, CLAIMS_PER_NOTICE);
      try {
        const { rows } = await this.db.query<{ i: number; n: number }>({
          name: 'hub_claim_polls',
          text: `with o as (select i, key, nextval('poll_order') as n from unnest($1::text[]) with ordinality as u(key, i)),
                      s as (select pg_notify($2, json_agg(json_build_array(key, n))::text) from o)
                 select o.i, o.n from o cross join s`,
          values: [batch.map((c) => c.key), POLL_CHANNEL],
        });
        for (const row of rows) batch[row.i - 1].resolve(row.n);
      } catch (error) {
        this.log.warn(
          { polls: batch.length, err: (error as Error).message },
          'could not order polls across hub processes: they wait as on one process',
        );
        for (const claim of batch) claim.reject(error);
      }
    }
    this.#flushing = false;
  }
}
