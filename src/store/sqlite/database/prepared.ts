/**
 * Kysely-built queries, compiled once and run synchronously through better-sqlite3 inside batches
 * (purge, expiry, a new filter). The hottest statements (a push's upsert, the takes' reads and writes)
 * are SQL text of their own, bound positionally: binding by name costs them a measurable share
 * (stateObjects.ts, takes/stateObjectTake.ts). The query is built with named markers in place of its
 * parameters; compiling shows where each marker landed, so each call binds its values in that order
 * without building SQL again.
 * Name every parameter explicitly when building (`values({ a: p.a })`): the markers object has no keys
 * to spread.
 */
import type Sqlite from 'better-sqlite3';
import type { Compilable } from 'kysely';

const MARK = '\u0001hub-param:';

/** Stands for the parameter `name` while the query is built; typed as what the query expects there. */
export type Params<P> = { readonly [K in keyof P]: P[K] };

export interface PreparedQuery<P, R> {
  run(args: P): Sqlite.RunResult;
  all(args: P): R[];
  get(args: P): R | undefined;
}

export function prepareQuery<P extends Record<string, unknown>, R = unknown>(
  sqlite: Sqlite.Database,
  build: (p: Params<P>) => Compilable<R>,
): PreparedQuery<P, R> {
  const markers = new Proxy({} as Params<P>, { get: (_t, name) => `${MARK}${String(name)}` });
  const compiled = build(markers).compile();
  // For each position: the argument's name, or undefined where the query has a constant of its own.
  const names = compiled.parameters.map((value) =>
    typeof value === 'string' && value.startsWith(MARK) ? value.slice(MARK.length) : undefined,
  );
  const constants = compiled.parameters;
  const statement = sqlite.prepare(compiled.sql);
  // One flat array per call (better-sqlite3 binds an array positionally): no closures, no spread.
  const bind = (args: P): unknown[] => {
    const values = new Array<unknown>(names.length);
    for (let i = 0; i < names.length; i++) {
      const name = names[i];
      values[i] = name === undefined ? constants[i] : args[name];
    }
    return values;
  };
  return {
    run: (args) => statement.run(bind(args)),
    all: (args) => statement.all(bind(args)) as R[],
    get: (args) => statement.get(bind(args)) as R | undefined,
  };
}
