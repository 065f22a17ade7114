/**
 * The store's interface is the seam a second engine plugs into (docs/architecture.md): the domain
 * (src/hub) and the HTTP layer (src/http) reach the database only through src/store/engine.ts. This
 * reads their source and fails when a file — or a module outside src/store it imports, however
 * indirectly — imports SQLite, Kysely or src/db.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');
const src = path.join(root, 'src');
const storeDir = path.join(src, 'store');
const dbDir = path.join(src, 'db');

/** Packages that are the SQLite engine: only src/store and src/db may use them. */
const ENGINE_PACKAGES = ['better-sqlite3', 'kysely'];

/**
 * Modules of src/store other than engine.ts that src/hub and src/http may import, each with its reason.
 * Everything else of the store is reached through the interfaces of engine.ts, wired in createHub.ts.
 */
const STORE_EXCEPTIONS: Record<string, string> = {
  'messageAddresses.ts': 'plain TypeScript (no SQL): who a message is addressed to, shared by the store\'s reads and the notifier\'s index so both decide alike',
};

const sourceFiles = (dir: string): string[] =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });

/** Every module specifier the file imports or re-exports (static, type-only and dynamic). */
function specifiers(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+['"]([^'"]+)['"]/gms)) found.push(m[1]);
  for (const m of text.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm)) found.push(m[1]);
  for (const m of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) found.push(m[1]);
  return found;
}

/** The file's text without its comments (block and line; a `//` inside a string only shortens what is searched). */
const code = (file: string) =>
  fs.readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');

const resolveRelative = (from: string, specifier: string) => path.resolve(path.dirname(from), specifier.replace(/\.js$/, '.ts'));
const isEnginePackage = (specifier: string) => ENGINE_PACKAGES.some((p) => specifier === p || specifier.startsWith(`${p}/`));
const inside = (dir: string, file: string) => file.startsWith(`${dir}${path.sep}`);
const rel = (file: string) => path.relative(root, file);

/** The problems of `file`: engine imports of it and of every non-store module it reaches. */
function problemsOf(file: string, seen = new Set<string>(), via: string[] = []): string[] {
  if (seen.has(file)) return [];
  seen.add(file);
  const chain = [...via, rel(file)].join(' → ');
  const problems: string[] = [];
  for (const specifier of specifiers(file)) {
    if (isEnginePackage(specifier)) {
      problems.push(`${chain} imports '${specifier}'`);
      continue;
    }
    if (!specifier.startsWith('.')) continue;
    const target = resolveRelative(file, specifier);
    if (inside(dbDir, target)) problems.push(`${chain} imports ${rel(target)}`);
    else if (inside(storeDir, target)) {
      const name = path.relative(storeDir, target);
      if (name !== 'engine.ts' && !Object.hasOwn(STORE_EXCEPTIONS, name)) problems.push(`${chain} imports ${rel(target)} (not through store/engine.ts)`);
    } else if (fs.existsSync(target)) problems.push(...problemsOf(target, seen, [...via, rel(file)]));
  }
  return problems;
}

const layers = [path.join(src, 'hub'), path.join(src, 'http')];

describe('the store is the only way to the database', () => {
  it('finds the files it checks', () => {
    const files = layers.flatMap(sourceFiles);
    expect(files.length).toBeGreaterThan(30);
    // The check itself sees an import when there is one.
    expect(specifiers(path.join(src, 'createHub.ts'))).toContain('./db/open.js');
  });

  for (const layer of layers) {
    it(`no module of src/${path.basename(layer)} imports SQLite, Kysely or src/db, directly or through a module outside src/store`, () => {
      const problems = sourceFiles(layer).flatMap((file) => problemsOf(file));
      expect(problems).toEqual([]);
    });
  }

  it('keeps the seam engine-neutral: store/engine.ts imports no engine and no SQLite implementation', () => {
    const engine = path.join(storeDir, 'engine.ts');
    const imports = specifiers(engine);
    expect(imports.filter(isEnginePackage)).toEqual([]);
    const local = imports.filter((s) => s.startsWith('.')).map((s) => resolveRelative(engine, s));
    expect(local.filter((t) => inside(dbDir, t)).map(rel)).toEqual([]);
    expect(local.filter((t) => inside(storeDir, t)).map((t) => path.relative(storeDir, t)).filter((n) => !Object.hasOwn(STORE_EXCEPTIONS, n))).toEqual([]);
  });

  it("keeps SQLite-only SQL inside the SQLite store: engine.ts, src/hub and src/http name it only in comments", () => {
    // Filters cross the seam as the wire's `*` patterns (engine.ts, StateObjectPatterns); the SQLite
    // store turns them into GLOBs and back (store/sqliteGlob.ts). `glob` not followed by `al` (global…).
    const SQLITE_ONLY = [/glob(?!al)/gi, /json_each/gi, /begin\s+immediate/gi, /\btrigger\b/gi, /\bpragma\b/gi];
    const sqliteIn = (file: string) => {
      const text = code(file);
      return SQLITE_ONLY.flatMap((term) => [...text.matchAll(term)].map((m) => `${rel(file)}: ${m[0]}`));
    };
    expect(sqliteIn(path.join(storeDir, 'engine.ts'))).toEqual([]);
    expect(layers.flatMap(sourceFiles).flatMap(sqliteIn)).toEqual([]);
    // The check sees each term (and not `global`), and sees GLOB where it is.
    const samples = ['name glob ?', 'from json_each(args)', 'BEGIN  IMMEDIATE', 'create trigger t', 'PRAGMA journal_mode'];
    SQLITE_ONLY.forEach((term, i) => expect(samples[i]).toMatch(new RegExp(term.source, 'i')));
    expect(SQLITE_ONLY.some((term) => new RegExp(term.source, 'i').test('globalRecovery'))).toBe(false);
    expect(sqliteIn(path.join(storeDir, 'sqliteGlob.ts')).length).toBeGreaterThan(0);
  });

  it('keeps the store below the hub: no module of src/store imports src/hub or src/http', () => {
    const problems = sourceFiles(storeDir).flatMap((file) =>
      specifiers(file)
        .filter((s) => s.startsWith('.'))
        .map((s) => resolveRelative(file, s))
        .filter((t) => layers.some((layer) => inside(layer, t)))
        .map((t) => `${rel(file)} imports ${rel(t)}`),
    );
    expect(problems).toEqual([]);
  });

  it('keeps the notifier behind its interfaces: only createHub.ts names the Notifier class (hub/wakeUps.ts)', () => {
    const notifier = path.join(src, 'hub', 'notifier.ts');
    const importers = sourceFiles(src)
      .filter((file) => specifiers(file).some((s) => s.startsWith('.') && resolveRelative(file, s) === notifier))
      .map(rel);
    expect(importers).toEqual(['src/createHub.ts']);
    // …and the class is what the interfaces describe, so a second implementation can take its place.
    expect(code(notifier)).toMatch(/class Notifier implements WakeUps\b/);
    expect(code(notifier)).toMatch(/class Waiter implements PollWaiter\b/);
  });

  it('names a reason for every exception, and each is still needed', () => {
    const imported = new Set(
      layers.flatMap(sourceFiles).flatMap((file) =>
        specifiers(file).filter((s) => s.startsWith('.')).map((s) => resolveRelative(file, s)).filter((t) => inside(storeDir, t)).map((t) => path.relative(storeDir, t)),
      ),
    );
    for (const [name, reason] of Object.entries(STORE_EXCEPTIONS)) {
      expect(reason.length, name).toBeGreaterThan(20);
      expect(imported.has(name), `${name} is no longer imported: remove its exception`).toBe(true);
    }
  });
});
