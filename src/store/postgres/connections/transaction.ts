/**
 * One transaction on a pooled connection, for the PostgreSQL engine's operations that are not group
 * commits: its promise settles after the COMMIT; a deadlock or serialization failure (40P01, 40001)
 * runs it again (up to 3 times); a lost connection, a lock not had within lock_timeout (55P03), a
 * statement timeout or a pool with no free connection in time becomes the catalogue's DatabaseBusy;
 * the hub's own errors thrown by the work (ClientGone, a refusal) pass through as they are.
 * A connection that failed goes back to the pool as broken, so the pool drops it.
 */
import pg from 'pg';
import { hubError } from '../../../errors.js';

const RETRIABLE = new Set(['40P01', '40001']);
const BUSY = new Set(['55P03', '57014']);
const ATTEMPTS = 3;

export const sqlState = (error: unknown) => (error instanceof pg.DatabaseError ? error.code : undefined);

/** The connection is gone or unusable: PostgreSQL ended the session, or the socket failed. */
export function isConnectionLost(error: unknown): boolean {
  if (error instanceof pg.DatabaseError) return /^(08|57P0)/.test(error.code ?? '');
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return (
    (typeof code === 'string' && /^E[A-Z]+$/.test(code)) ||
    /Connection terminated|not queryable|Connection ended|timeout exceeded when trying to connect/i.test(error.message)
  );
}

/** What the hub is told: DatabaseBusy for what a later try may cure, the error itself otherwise. */
export function storeError(error: unknown): unknown {
  return isConnectionLost(error) || BUSY.has(sqlState(error) ?? '')
    ? hubError('DatabaseBusy', { engine: 'PostgreSQL' })
    : error;
}

export interface TransactionOptions {
  isolation?: 'read committed' | 'repeatable read' | 'serializable';
  /** A deadlock or serialization failure thrown as it is, not retried (a batch of takes retries its takes alone: takeBatch.ts). */
  once?: boolean;
}

export function transaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  return attempts(pool, options.once ? 1 : ATTEMPTS, async (client) => {
    await client.query(options.isolation ? `begin isolation level ${options.isolation}` : 'begin');
    return rolledBackOnFailure(client, async () => {
      const result = await work(client);
      await client.query('commit');
      return result;
    });
  });
}

/**
 * A transaction sent as one query string (the simple protocol: one round trip), `text` written for the
 * connection it runs on (its own BEGIN and COMMIT, values as literals: client.escapeLiteral); its
 * statements' results in order. Retried and sorted as transaction() (`once` as there).
 */
export function transactionInOneTrip(
  pool: pg.Pool,
  text: (client: pg.PoolClient) => Promise<string>,
  options: Pick<TransactionOptions, 'once'> = {},
): Promise<pg.QueryResult[]> {
  return attempts(pool, options.once ? 1 : ATTEMPTS, async (client) => {
    const sql = await text(client);
    return rolledBackOnFailure(client, async () => {
      const results = (await client.query(sql)) as pg.QueryResult | pg.QueryResult[];
      return Array.isArray(results) ? results : [results];
    });
  });
}

async function rolledBackOnFailure<T>(client: pg.PoolClient, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!isConnectionLost(error)) await client.query('rollback').catch(() => {});
    throw error;
  }
}

/** Runs `run` on a pooled connection, again on a deadlock or serialization failure (up to `tries` times); errors sorted (storeError). */
async function attempts<T>(pool: pg.Pool, tries: number, run: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      throw storeError(error);
    }
    let broken: Error | undefined;
    try {
      return await run(client);
    } catch (error) {
      if (isConnectionLost(error)) broken = error as Error;
      if (RETRIABLE.has(sqlState(error) ?? '') && attempt < tries) continue;
      throw storeError(error);
    } finally {
      client.release(broken);
    }
  }
}

/** One statement outside a transaction, its failure sorted as the hub expects (storeError). */
export async function query<R extends pg.QueryResultRow>(
  db: pg.Pool | pg.PoolClient,
  text: string,
  values: unknown[] = [],
): Promise<R[]> {
  try {
    return (await db.query<R>(text, values)).rows;
  } catch (error) {
    throw storeError(error);
  }
}
