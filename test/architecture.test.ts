/**
 * The ports are the seam a second engine plugs into (docs/architecture.md): the domain (src/hub) owns
 * them (src/hub/ports), the engines (src/store) implement them, and the domain and the HTTP layer
 * (src/http) never import an engine. This reads the source and fails when a file — or a module outside
 * src/store it imports, however indirectly — imports SQLite, Kysely or src/store.
 * Above the store, the engines are one seam (src/store/index.ts, src/store/commands.ts): no file outside
 * src/store imports an engine's folder or package or names a PostgreSQL type, and the composition root
 * never reads which database the settings name.
 * Errors have one catalogue (src/errors.ts): only it constructs a HubError, only src/http knows their
 * statuses, only the SQLite engine's database folder names SQLite's error codes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');
const src = path.join(root, 'src');
const storeDir = path.join(src, 'store');
const sqliteDatabaseDir = path.join(storeDir, 'sqlite', 'database');

/** Packages that are the SQLite engine: only src/store may use them. */
const ENGINE_PACKAGES = ['better-sqlite3', 'kysely'];

const hubDir = path.join(src, 'hub');
const portsDir = path.join(hubDir, 'ports');

/**
 * Modules of src/hub (besides the ports) that the store may import, each with its reason: plain
 * domain code with no state and no I/O, which an engine needs to speak the ports' language.
 */
const DOMAIN_FOR_THE_STORE: Record<string, string> = {
  'polls/clientSignal.ts': "the type of the abort signal a poll's `take` is given (the long-poll domain)",
  'messageAddresses.ts':
    "who a message is addressed to, shared by the store's reads and the notifier's index so both decide alike",
  'scope.ts': 'the scope numbers a message row carries (ScopeType): All and Others name no targets in their args',
  'polls/wakeUps.ts':
    "the announcements a store shared by several processes makes of their commits to this process's notifier (WakeUps), the same its own writes make",
};

const sourceFiles = (dir: string): string[] =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });

/** Every module specifier the file imports or re-exports (static, type-only and dynamic); `text` stands in for its content. */
function specifiers(file: string, text = fs.readFileSync(file, 'utf8')): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+['"]([^'"]+)['"]/gms)) found.push(m[1]);
  for (const m of text.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm)) found.push(m[1]);
  for (const m of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) found.push(m[1]);
  return found;
}

/** The file's text without its comments (block and line; a `//` inside a string only shortens what is searched). */
const code = (file: string) =>
  fs
    .readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/.*$/gm, '');

/** The file's code without comments and without the content of string literals (a rough lexer: enough for this source). */
const codeWithoutStrings = (text: string) =>
  text.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"|`(?:\\.|[^`\\])*`/g, (m) =>
    m.startsWith('/') ? '' : '""',
  );

/** snake_case names used as properties in code: declared (`a_b:` in an interface, type or object literal) or read (`.a_b`). */
const snakeCaseProperties = (text: string) =>
  [
    ...codeWithoutStrings(text).matchAll(
      /(?:(?:^|[{;,(\s])(?:readonly\s+)?([a-z][a-z0-9]*_[a-z0-9_]*)\??\s*:)|\.([a-z][a-z0-9]*_[a-z0-9_]*)\b/gm,
    ),
  ].map((m) => m[1] ?? m[2]);

const resolveRelative = (from: string, specifier: string) =>
  path.resolve(path.dirname(from), specifier.replace(/\.js$/, '.ts'));
const isEnginePackage = (specifier: string) =>
  ENGINE_PACKAGES.some((p) => specifier === p || specifier.startsWith(`${p}/`));
const inside = (dir: string, file: string) => file.startsWith(`${dir}${path.sep}`);
const rel = (file: string) => path.relative(root, file);

/** The problems of `file`: engine imports of it and of every non-store module it reaches. */
function problemsOf(file: string, seen = new Set<string>(), via: string[] = [], text?: string): string[] {
  if (seen.has(file)) return [];
  seen.add(file);
  const chain = [...via, rel(file)].join(' → ');
  const problems: string[] = [];
  for (const specifier of specifiers(file, text)) {
    if (isEnginePackage(specifier)) {
      problems.push(`${chain} imports '${specifier}'`);
      continue;
    }
    if (!specifier.startsWith('.')) continue;
    const target = resolveRelative(file, specifier);
    if (inside(storeDir, target)) problems.push(`${chain} imports ${rel(target)}`);
    else if (fs.existsSync(target)) problems.push(...problemsOf(target, seen, [...via, rel(file)]));
  }
  return problems;
}

const layers = [path.join(src, 'hub'), path.join(src, 'http')];

describe('the store is the only way to the database', () => {
  it('finds the files it checks', () => {
    const files = layers.flatMap(sourceFiles);
    expect(files.length).toBeGreaterThan(30);
    // The check itself sees an import when there is one.
    expect(specifiers(path.join(src, 'createHub.ts'))).toContain('./hub/polls/notifier.js');
  });

  for (const layer of layers) {
    it(`no module of src/${path.basename(layer)} imports SQLite, Kysely or src/store, directly or through another module`, () => {
      const problems = sourceFiles(layer).flatMap((file) => problemsOf(file));
      expect(problems).toEqual([]);
    });
  }

  it('sees an import of the store from src/http or src/hub, and one of SQLite', () => {
    const file = path.join(src, 'http', 'violation.ts');
    const text =
      "import type { SqliteHubStore } from '../store/sqlite/hubStore.js';\nimport Sqlite from 'better-sqlite3';\n";
    expect(problemsOf(file, new Set(), [], text)).toEqual([
      `${rel(file)} imports src/store/sqlite/hubStore.ts`,
      `${rel(file)} imports 'better-sqlite3'`,
    ]);
  });

  it('keeps SQLite-only SQL inside the SQLite store: src/hub (its ports too) and src/http name it only in comments', () => {
    // Filters cross the seam as the wire's `*` patterns (hub/ports/stateObjects.ts, StateObjectPatterns);
    // the SQLite store turns them into GLOBs and back (store/sqlite/glob.ts). `glob` not followed by `al` (global…).
    const SQLITE_ONLY = [/glob(?!al)/gi, /json_each/gi, /begin\s+immediate/gi, /\btrigger\b/gi, /\bpragma\b/gi];
    const sqliteIn = (file: string) => {
      const text = code(file);
      return SQLITE_ONLY.flatMap((term) => [...text.matchAll(term)].map((m) => `${rel(file)}: ${m[0]}`));
    };
    expect(layers.flatMap(sourceFiles).flatMap(sqliteIn)).toEqual([]);
    // The check sees each term (and not `global`), and sees GLOB where it is.
    const samples = [
      'name glob ?',
      'from json_each(args)',
      'BEGIN  IMMEDIATE',
      'create trigger t',
      'PRAGMA journal_mode',
    ];
    SQLITE_ONLY.forEach((term, i) => expect(samples[i]).toMatch(new RegExp(term.source, 'i')));
    expect(SQLITE_ONLY.some((term) => new RegExp(term.source, 'i').test('globalRecovery'))).toBe(false);
    expect(sqliteIn(path.join(storeDir, 'sqlite', 'glob.ts')).length).toBeGreaterThan(0);
  });

  /** What a store module imports above the store: anything of src/http, of src/hub anything but the ports and the listed domain modules. */
  const storeReachingUp = (file: string, text?: string) =>
    specifiers(file, text)
      .filter((s) => s.startsWith('.'))
      .map((s) => resolveRelative(file, s))
      .filter((t) => layers.some((layer) => inside(layer, t)))
      .filter(
        (t) =>
          !inside(portsDir, t) && !(inside(hubDir, t) && Object.hasOwn(DOMAIN_FOR_THE_STORE, path.relative(hubDir, t))),
      )
      .map((t) => `${rel(file)} imports ${rel(t)}`);

  it('keeps the store below the hub: src/store imports of src/hub only its ports and plain domain modules, nothing of src/http', () => {
    expect(sourceFiles(storeDir).flatMap((file) => storeReachingUp(file))).toEqual([]);
    // The check sees a store module reaching up.
    const file = path.join(storeDir, 'sqlite', 'violation.ts');
    const text =
      "import type { Messages } from '../../hub/messages.js';\nimport type { MessageStore } from '../../hub/ports/messages.js';\nimport { queryParam } from '../../http/request.js';\n";
    expect(storeReachingUp(file, text)).toEqual([
      `${rel(file)} imports src/hub/messages.ts`,
      `${rel(file)} imports src/http/request.ts`,
    ]);
  });

  it('keeps rows out of the domain: no interface, type or object of src/hub declares or reads a snake_case property', () => {
    const found = sourceFiles(hubDir).flatMap((file) =>
      snakeCaseProperties(fs.readFileSync(file, 'utf8')).map((name) => `${rel(file)}: ${name}`),
    );
    expect(found).toEqual([]);
    // The check sees a snake_case field declared or read, and not one in a string or a comment.
    expect(
      snakeCaseProperties('export interface Row {\n  readonly last_update_ms: number;\n  saga_id?: string }'),
    ).toEqual(['last_update_ms', 'saga_id']);
    expect(snakeCaseProperties('const x = { sender_type: 2 }; f(row.sent_ms);')).toEqual(['sender_type', 'sent_ms']);
    expect(
      snakeCaseProperties("const kind = { kind: 'state_objects' }; // row.is_deleted: a comment\n/* seq_no: x */"),
    ).toEqual([]);
  });

  it('keeps the notifier behind its interfaces: only createHub.ts names the Notifier class (hub/polls/wakeUps.ts)', () => {
    const notifier = path.join(src, 'hub', 'polls', 'notifier.ts');
    const importers = sourceFiles(src)
      .filter((file) => specifiers(file).some((s) => s.startsWith('.') && resolveRelative(file, s) === notifier))
      .map(rel);
    expect(importers).toEqual(['src/createHub.ts']);
    // Its waiters (hub/polls/waiter.ts) are the notifier's alone.
    const waiter = path.join(src, 'hub', 'polls', 'waiter.ts');
    expect(
      sourceFiles(src)
        .filter((file) => specifiers(file).some((s) => s.startsWith('.') && resolveRelative(file, s) === waiter))
        .map(rel),
    ).toEqual(['src/hub/polls/notifier.ts']);
    // …and the classes are what the interfaces describe, so a second implementation can take their place.
    expect(code(notifier)).toMatch(/class Notifier implements WakeUps\b/);
    expect(code(waiter)).toMatch(/class Waiter implements PollWaiter\b/);
  });

  it('names a reason for every domain module the store may import, and each is still imported', () => {
    const imported = new Set(
      sourceFiles(storeDir).flatMap((file) =>
        specifiers(file)
          .filter((s) => s.startsWith('.'))
          .map((s) => resolveRelative(file, s))
          .filter((t) => inside(hubDir, t) && !inside(portsDir, t))
          .map((t) => path.relative(hubDir, t)),
      ),
    );
    for (const [name, reason] of Object.entries(DOMAIN_FOR_THE_STORE)) {
      expect(reason.length, name).toBeGreaterThan(20);
      expect(imported.has(name), `${name} is no longer imported: remove its exception`).toBe(true);
    }
  });
});

describe('one seam between the hub and its engines', () => {
  /** The engines' own folders: only src/store reaches them (through index.ts and commands.ts). */
  const ENGINE_FOLDERS = ['sqlite', 'postgres', 'copy'].map((name) => path.join(storeDir, name));
  /** The engines' packages. */
  const ENGINES = ['pg', 'better-sqlite3', 'kysely'];
  const COMPOSITION_ROOT = ['createHub.ts', 'hubStart.ts', 'hubServices.ts'].map((name) => path.join(src, name));

  /** What a file outside src/store imports of an engine (its folders, its packages) and which PostgreSQL types it names. */
  const engineKnowledge = (file: string, text = fs.readFileSync(file, 'utf8')) => [
    ...specifiers(file, text)
      .filter((s) =>
        s.startsWith('.')
          ? ENGINE_FOLDERS.some((dir) => inside(dir, resolveRelative(file, s)))
          : ENGINES.some((p) => s === p || s.startsWith(`${p}/`)),
      )
      .map((s) => `${rel(file)} imports ${s}`),
    ...[...codeWithoutStrings(text).matchAll(/\bPostgres[A-Z]\w*|\bpg\.[A-Z]\w*/g)].map(
      (m) => `${rel(file)} names ${m[0]}`,
    ),
  ];

  it('no file outside src/store imports an engine folder (store/sqlite, store/postgres, store/copy), pg, better-sqlite3 or kysely, or names a PostgreSQL type', () => {
    const outside = sourceFiles(src).filter((file) => !inside(storeDir, file));
    expect(outside.length).toBeGreaterThan(100);
    expect(outside.flatMap((file) => engineKnowledge(file))).toEqual([]);
    // The check sees each kind of violation, and not a mention in a comment or a string.
    const file = path.join(src, 'violation.ts');
    const text = [
      "import type { PostgresHubStore } from './store/postgres/hubStore.js';",
      "import { openSqliteStore } from './store/sqlite/openedStore.js';",
      "const copy = await import('./store/copy/fromSqlite.js');",
      "import type pg from 'pg';",
      "import Sqlite from 'better-sqlite3';",
      "import { sql } from 'kysely';",
      "import { openStore } from './store/index.js';",
      'let pool: pg.Pool; // PostgresLog',
      "const said = 'PostgresListener';",
    ].join('\n');
    expect(engineKnowledge(file, text)).toEqual([
      'src/violation.ts imports ./store/postgres/hubStore.js',
      'src/violation.ts imports ./store/sqlite/openedStore.js',
      'src/violation.ts imports pg',
      'src/violation.ts imports better-sqlite3',
      'src/violation.ts imports kysely',
      'src/violation.ts imports ./store/copy/fromSqlite.js',
      'src/violation.ts names PostgresHubStore',
      'src/violation.ts names pg.Pool',
    ]);
  });

  it('the composition root (createHub.ts, hubStart.ts, hubServices.ts) never reads databaseUrl: the store picks the engine', () => {
    const reads = (file: string, text = code(file)) =>
      [...codeWithoutStrings(text).matchAll(/\bdatabaseUrl\b/g)].map(() => `${rel(file)} reads databaseUrl`);
    expect(COMPOSITION_ROOT.flatMap((file) => reads(file))).toEqual([]);
    // The check sees a read, and not a mention in a comment or a string.
    const file = COMPOSITION_ROOT[0];
    expect(reads(file, "if (options.databaseUrl) open('databaseUrl'); // databaseUrl")).toEqual([
      'src/createHub.ts reads databaseUrl',
    ]);
  });
});

describe('one error catalogue', () => {
  const errorsFile = path.join(src, 'errors.ts');
  const errorMapping = path.join(src, 'http', 'errorMapping.ts');
  /** Where a file constructs a HubError itself instead of naming a code with hubError(). */
  const constructions = (text: string) => [...text.matchAll(/\bnew\s+HubError\s*\(/g)].length;

  it('only errors.ts constructs a HubError: every other module names a code with hubError()', () => {
    const found = sourceFiles(src)
      .filter((file) => file !== errorsFile && constructions(code(file)) > 0)
      .map(rel);
    expect(found).toEqual([]);
    // The check sees a construction where there is one, spaced or not, and not hubError( or a comment.
    expect(constructions(code(errorsFile))).toBeGreaterThan(0);
    expect(constructions("throw new HubError('AccessDenied', 'x');")).toBe(1);
    expect(constructions('throw new  HubError (403);')).toBe(1);
    expect(constructions("throw hubError('AccessDenied');")).toBe(0);
  });

  it('only the HTTP layer knows statuses: no module outside src/http imports http/errorMapping.ts', () => {
    const importers = sourceFiles(src)
      .filter((file) => !inside(path.join(src, 'http'), file))
      .filter((file) => specifiers(file).some((s) => s.startsWith('.') && resolveRelative(file, s) === errorMapping))
      .map(rel);
    expect(importers).toEqual([]);
    expect(
      specifiers(path.join(src, 'http', 'app.ts')).map((s) => resolveRelative(path.join(src, 'http', 'app.ts'), s)),
    ).toContain(errorMapping);
  });

  it("SQLite's error codes stay below the store: only store/sqlite/database names SQLITE_ (store/sqlite/database/busy.ts turns SQLITE_BUSY into DatabaseBusy)", () => {
    // A code such as SQLITE_BUSY, not a name that merely contains it (LAST_SQLITE_MIGRATION).
    const names = (text: string) => /(?<!\w)SQLITE_[A-Z]/.test(text);
    const naming = (file: string) => names(code(file));
    expect(
      sourceFiles(src)
        .filter((file) => !inside(sqliteDatabaseDir, file) && naming(file))
        .map(rel),
    ).toEqual([]);
    expect(naming(path.join(sqliteDatabaseDir, 'busy.ts'))).toBe(true);
    expect([names("code === 'SQLITE_BUSY'"), names('const LAST_SQLITE_MIGRATION = 1')]).toEqual([true, false]);
  });
});

/** The cycles among `files`' relative imports (type-only ones too), each as the chain that closes it. */
function importCycles(files: string[]): string[] {
  const cycles: string[] = [];
  const done = new Set<string>();
  const visit = (file: string, chain: string[]) => {
    if (chain.includes(file)) {
      cycles.push([...chain.slice(chain.indexOf(file)), file].map(rel).join(' → '));
      return;
    }
    if (done.has(file)) return;
    for (const specifier of specifiers(file)) {
      const target = resolveRelative(file, specifier);
      if (specifier.startsWith('.') && files.includes(target)) visit(target, [...chain, file]);
    }
    done.add(file);
  };
  for (const file of files) visit(file, []);
  return cycles;
}

describe('every room of src reads top to bottom (issue 31)', () => {
  const httpDir = path.join(src, 'http');

  it('has no import cycle, type-only imports included', () => {
    expect(importCycles(sourceFiles(src))).toEqual([]);
    // It sees a type-only import when there is one.
    expect(specifiers(path.join(httpDir, 'context.ts'))).toContain('./detached.js');
  });

  it('keeps its files under 300 lines and its folders at 20 files at most', () => {
    const files = sourceFiles(src);
    const long = files.filter((file) => fs.readFileSync(file, 'utf8').split('\n').length > 300).map(rel);
    expect(long).toEqual([]);
    const perFolder = new Map<string, number>();
    for (const file of files) perFolder.set(rel(path.dirname(file)), (perFolder.get(rel(path.dirname(file))) ?? 0) + 1);
    expect([...perFolder].filter(([, n]) => n > 20)).toEqual([]);
  });
});
