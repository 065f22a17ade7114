/**
 * What the PostgreSQL benchmarks share (bench/postgres.ts and the A/B and diagnostic scripts beside it):
 * a throwaway database, hub processes on it, push load spread over them, their CPU and that of their
 * PostgreSQL backends, and the polls waiting on them.
 */
import crypto from 'node:crypto';
import autocannon from 'autocannon';
import pg from 'pg';
import type { Server } from './support.js';
import { BENCH_ADMIN_URL, cpuMs, httpGet, identity, pushPath, sleep, startHubProcess } from './support.js';

/** A fresh database; `drop()` removes it (with force: hubs may still be closing). */
export interface Database {
  name: string;
  url: string;
  /** A connection to the server's administrative database, ended by `drop()`. */
  admin: pg.Client;
  /** Drops the database (once; again is a no-op). */
  drop(): Promise<void>;
}

export async function freshDatabase(): Promise<Database> {
  const admin = new pg.Client({ connectionString: BENCH_ADMIN_URL, application_name: 'hub-bench' });
  await admin.connect();
  const name = `hub_bench_${crypto.randomBytes(4).toString('hex')}`;
  await admin.query(`create database ${name}`);
  const url = new URL(BENCH_ADMIN_URL);
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    name,
    url: url.toString(),
    admin,
    async drop() {
      if (dropped) return;
      dropped = true;
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

export const stopAll = (hubs: Server[]) => Promise.all(hubs.map((h) => h.stop()));

/**
 * `count` hub processes of build `dist` on `db`, their node given HUB_NODE_ARGS (e.g. `--cpu-prof`);
 * should one fail to start, those started stop and `db` is dropped.
 */
export async function startPostgresHubs(
  db: Database,
  count: number,
  env: { [k: string]: string } = {},
  dist = process.env.BENCH_HUB_DIST ?? 'dist',
): Promise<Server[]> {
  const nodeArgs = process.env.HUB_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const hubs: Server[] = [];
  try {
    for (let i = 0; i < count; i++)
      hubs.push(await startHubProcess({ HUB_DATABASE_URL: db.url, ...env }, nodeArgs, dist));
  } catch (error) {
    await stopAll(hubs);
    await db.drop();
    throw error;
  }
  return hubs;
}

/** The PostgreSQL backends of these hub processes (application_name `hub:<pid>:<role>`), with their roles. */
export async function backendsOf(admin: pg.Client, hubs: Server[]): Promise<{ pid: number; role: string }[]> {
  const { rows } = await admin.query<{ pid: number; application_name: string }>(
    `select pid, application_name from pg_stat_activity where application_name like any($1::text[])`,
    [hubs.map((h) => `hub:${h.pid}:%`)],
  );
  return rows.map((r) => ({ pid: r.pid, role: r.application_name.split(':')[2] }));
}

/**
 * CPU (ms) used by the hub processes and by their PostgreSQL backends while `work` runs. A backend that
 * appears during the work counts whole (it is new); one that ends during it is lost (rare: pools keep
 * their connections 30 s idle).
 */
export async function cpuDuring<T>(admin: pg.Client, hubs: Server[], work: () => Promise<T>) {
  const before = new Map((await backendsOf(admin, hubs)).map(({ pid }) => [pid, cpuMs(pid)]));
  const hubBefore = hubs.map((h) => cpuMs(h.pid));
  const result = await work();
  const hubMs = hubs.reduce((sum, h, i) => sum + cpuMs(h.pid) - hubBefore[i], 0);
  const pgByRole: Record<string, number> = {};
  for (const { pid, role } of await backendsOf(admin, hubs))
    pgByRole[role] = (pgByRole[role] ?? 0) + cpuMs(pid) - (before.get(pid) ?? 0);
  const pgMs = Object.values(pgByRole).reduce((sum, ms) => sum + ms, 0);
  return { result, hubMs, pgMs, pgByRole };
}

/** Pushes from `clients` connections spread over `hubs` for `seconds` (values unique per hub); throws on any failure. */
export async function pushLoad(hubs: Server[], clients: number, seconds: number) {
  const results = await Promise.all(
    hubs.map(async (hub, i) => {
      let n = i * 1_000_000;
      const result = await autocannon({
        url: hub.url,
        connections: Math.floor(clients / hubs.length) + (i < clients % hubs.length ? 1 : 0),
        duration: seconds,
        requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: pushPath(n++) }) }],
      });
      if (result.non2xx > 0 || result.errors > 0)
        throw new Error(`${result.non2xx} non-2xx and ${result.errors} errors at ${hub.url}`);
      return result;
    }),
  );
  const total = results.reduce((s, r) => s + r.requests.total, 0);
  return { total, perSecond: results.reduce((s, r) => s + r.requests.average, 0) };
}

export async function waitingOn(hub: Server): Promise<number> {
  const { body } = await httpGet(`${hub.url}/metrics?${identity.admin}`);
  return Number(/hub_waiting_long_polls (\d+)/.exec(body)?.[1] ?? 0);
}

/** Waits until the hubs together hold at least `atLeast` waiting polls; returns how many. */
export async function waitingPollsOn(hubs: Server[], atLeast: number, seconds = 60): Promise<number> {
  let total = 0;
  for (let i = 0; i < seconds * 10; i++) {
    total = (await Promise.all(hubs.map(waitingOn))).reduce((s, v) => s + v, 0);
    if (total >= atLeast) return total;
    await sleep(100);
  }
  throw new Error(`${total} polls waiting, fewer than ${atLeast}`);
}
