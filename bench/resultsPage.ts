/**
 * docs/benchmarks.md and docs/benchmarks.json, written by `npm run bench` (bench/run.ts) from the run's
 * figures: the results page, nothing written by hand. The investigations behind the figures live in
 * docs/benchmark-notes.md, which the page links to and this never touches.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FloorRow, Subject } from './floor.js';
import { WARM_ROUNDS, WARM_SAMPLES } from './floor.js';
import type { Row } from './postgres.js';
import type { SignalrRow } from './signalr.js';
import { goalMet } from './signalr.js';
import { ROOT } from './support.js';

export interface Results {
  date: string;
  minutes: number;
  machine: string;
  /** The one-minute load average at the start and at the end of the run (other work on the machine). */
  load: [number, number];
  command: string;
  turns: number;
  /** Fan-out rounds per turn for each subject (unset in pages of runs before it was recorded). */
  fanoutRounds?: number;
  /** What the `before` column measured (a build's directory and commit), when the run had one. */
  before?: string;
  floor: FloorRow[];
  profile: { fn: string; percent: number }[];
  /** The other scenarios: this run's, or kept from an earlier `--all` run (with its date). */
  scenarios?: { date: string; command: string; rows: Row[] };
  /** Issue 32's table (bench/signalr.ts): this run's, or kept from the run that last measured it. */
  signalr?: { date: string; command: string; turns: number; load: [number, number]; rows: SignalrRow[] };
}

const FILE = path.join(ROOT, 'docs', 'benchmarks.md');
const JSON_FILE = path.join(ROOT, 'docs', 'benchmarks.json');

/** The page's figures as the last run wrote them, if they are in the current shape. */
export function previousResults(): Results | undefined {
  if (!fs.existsSync(JSON_FILE)) return undefined;
  const previous = JSON.parse(fs.readFileSync(JSON_FILE, 'utf8')) as Partial<Results>;
  return previous.floor ? (previous as Results) : undefined;
}

/** The other scenarios of the previous run, to keep when this one did not measure them. */
export function previousScenarios(): Results['scenarios'] {
  if (!fs.existsSync(JSON_FILE)) return undefined;
  const previous = JSON.parse(fs.readFileSync(JSON_FILE, 'utf8')) as Partial<Results> & { rows?: Row[]; date: string };
  if (previous.scenarios) return previous.scenarios;
  // The page before issue 33 had only these rows, at the top level.
  return previous.rows ? { date: previous.date, command: 'npm run bench', rows: previous.rows } : undefined;
}

const COLUMNS: { subject: Subject; title: string }[] = [
  { subject: 'hub', title: 'the hub' },
  { subject: 'before', title: 'before' },
  { subject: 'koa', title: 'bare Koa 204' },
  { subject: 'commit', title: 'bare Koa + commit' },
  { subject: 'node', title: 'bare Node' },
  { subject: 'nchan', title: 'Nchan' },
];

const GOAL_TITLES: Record<string, string> = {
  before: 'before',
  koa: 'bare Koa',
  commit: 'bare Koa + commit',
  node: 'bare Node',
  nchan: 'Nchan',
};

function goalCell(row: FloorRow): string {
  if (!row.goal) return '—';
  const ratio = row.ratios[`hub/${row.goal.against}`];
  const goal = `≤ ${row.goal.max}× ${GOAL_TITLES[row.goal.against]}`;
  if (ratio === undefined) return `${goal}: not measured`;
  const met = ratio <= row.goal.max;
  if (row.goal.floor === undefined) return `${goal}: **${met ? 'met' : 'not met'}** (${ratio}×)`;
  // The floor does the same work as the hub and nothing more (issue 33's "Done when"): at or past the goal, it stops it.
  const floor = `bare Koa + commit: ${row.goal.floor}×`;
  if (met) return `${goal}: **met** (${ratio}×; ${floor})`;
  return row.goal.floor >= row.goal.max
    ? `${goal}: **not met** (${ratio}×); **the floor stops it** (${floor})`
    : `${goal}: **not met** (${ratio}×; ${floor}, under the goal)`;
}

function ratioCell(row: FloorRow, side: 'hub' | 'before'): string {
  return (['before', 'koa', 'commit', 'node', 'nchan'] as const)
    .map((base) =>
      row.ratios[`${side}/${base}`] === undefined ? '' : `${row.ratios[`${side}/${base}`]}× ${GOAL_TITLES[base]}`,
    )
    .filter(Boolean)
    .join(', ');
}

function floorTable(results: Results): string {
  const columns = COLUMNS.filter(({ subject }) => results.floor.some((row) => row.figures[subject]));
  const head = `| what | ${columns.map((c) => c.title).join(' | ')} | the hub ÷ | before ÷ | goal (issue 33) | load |`;
  const rule = `|${'---|'.repeat(columns.length + 5)}`;
  const lines = results.floor.map((row) => {
    const cells = columns.map(({ subject }) => {
      const figure = row.figures[subject];
      return figure ? `${figure.value} ${row.unit}` : '—';
    });
    const loads = [...new Set(Object.values(row.figures).map((f) => f.load))].join(', ');
    return `| ${row.what} | ${cells.join(' | ')} | ${ratioCell(row, 'hub')} | ${ratioCell(row, 'before')} | ${goalCell(row)} | ${loads} |`;
  });
  const notes = [...new Set(results.floor.map((row) => row.note).filter(Boolean))].map((note) => `\n${note}.`);
  return [head, rule, ...lines].join('\n') + notes.join('');
}

function scenariosTable(scenarios: NonNullable<Results['scenarios']>): string {
  const rows = scenarios.rows.map((r) => `| ${r.scenario} | ${r.measure} | ${r.value} ${r.unit} | ${r.note ?? ''} |`);
  return ['| Scenario | Measure | Value | Note |', '|---|---|---|---|', ...rows].join('\n');
}

function signalrSection(signalr: NonNullable<Results['signalr']>, date: string): string {
  const lines = signalr.rows.map((row) => {
    const goal = row.goal
      ? `${row.goal.at === 'most' ? '≤' : '≥'} ${row.goal.ratio}×: **${goalMet(row) ? 'met' : 'not met'}**`
      : '—';
    return `| ${row.what} | ${row.signalr} ${row.unit} | ${row.baseline} ${row.unit} (${row.against}) | ${row.ratio}× | ${goal} | ${row.load} |`;
  });
  return (
    '## SignalR over WebSockets against the REST long-poll (issue 32)\n\n' +
    `Measured ${signalr.date === date ? 'in this run' : `on ${signalr.date}`} by \`${signalr.command}\` ` +
    `(${signalr.turns} turn${signalr.turns === 1 ? '' : 's'}; one-minute load average ${signalr.load[0]} at its start, ` +
    `${signalr.load[1]} at its end). SQLite, \`HUB_SYNC=normal\`; every hub its own process, every side's clients in a ` +
    'worker process of their own (bench/signalrClients.ts: raw `ws` connections to ConsumerHub, each subscribed with ' +
    '`SubscribeStateObjects`, or REST long-pollers each on its own keep-alive connection), the worker also sending the ' +
    'pushes it times. Wake-up: 1,000 clients each following its own object, single samples in alternation, from sending ' +
    'the push to the client having its `UpdateStateObject` (or its GetStateObjects answer). Fan-out: 1,000 clients of one ' +
    'object, from sending the push to the last client having it, the long-pollers re-polling at once. Memory: the hub’s ' +
    'RSS growth per client once all are connected and subscribed (one sample). Throughput: 64 closed-loop REST pushers ' +
    'against a hub holding the 1,000 idle WebSocket connections and one holding none, in alternation. Ratios are SignalR ' +
    '÷ baseline, medians of the per-turn ratios (on a busy machine not always the ratio of the figures, which are medians ' +
    'of the turns).\n\n' +
    '| what | SignalR (WebSockets) | baseline | ratio | goal (issue 32) | load |\n|---|---|---|---|---|---|\n' +
    `${lines.join('\n')}\n\n`
  );
}

export function writeResults(results: Results): void {
  fs.writeFileSync(JSON_FILE, `${JSON.stringify(results, null, 2)}\n`);
  const before = results.before ? ` "before" is ${results.before}, measured in the same run.` : '';
  const profile = results.profile.map((p) => `| ${p.percent}% | \`${p.fn}\` |`).join('\n');
  const scenarios = results.scenarios
    ? `## Other scenarios\n\nMeasured ${results.scenarios.date === results.date ? 'in this run' : `on ${results.scenarios.date}`} by \`${results.scenarios.command}\` ` +
      '(SQLite unless the scenario says PostgreSQL; throughputs are medians of 3 runs, baselines measured in the same run).\n\n' +
      `${scenariosTable(results.scenarios)}\n\n`
    : '';
  fs.writeFileSync(
    FILE,
    `# Benchmarks\n\n` +
      `Generated by \`${results.command}\` on ${results.date} (${results.minutes} min) — ${results.machine}; ` +
      `one-minute load average ${results.load[0]} at the start, ${results.load[1]} at the end (other work on the machine ` +
      'weighs on every figure: only the ratios to baselines measured in the same run carry over).\n\n' +
      'How to run: `npm run bench` (a few minutes; writes this page and benchmarks.json), `-- --turns 9` for more turns, ' +
      '`-- --before <dir>` to measure an older build beside this one (a `dist` built inside the repository, so it finds ' +
      'node_modules), `-- --all` to add the other scenarios below, `-- --only <names>` for some scenarios without touching ' +
      'this page (`-- --only signalr --page` to rewrite it all the same, the tables not measured kept from benchmarks.json). Nchan is measured when nginx and its module are installed (Debian: `nginx libnginx-mod-nchan`); nothing is ' +
      'installed by the benchmark.\n\n' +
      'How the figures came about, what was tried and why the code is as it is: [benchmark-notes.md](benchmark-notes.md).\n\n' +
      `## The REST hot path against its floor and Nchan (issue 33)\n\n` +
      'SQLite, `HUB_SYNC=normal`; every subject its own process on loopback, started by the same script and measured in ' +
      `alternating turns (${results.turns} turn${results.turns === 1 ? '' : 's'}; wake-up: single samples in alternation); ratios are medians of the per-turn ratios.${before} ` +
      'CPU per push: server CPU time (/proc) per request at 64 closed-loop clients; bare Koa + commit stores each push as the ' +
      'hub does (same row, same indexes, group commit) and answers after the commit. For wake-up and fan-out, bare Koa + commit ' +
      '(bench/bareKoaLongPoll.ts) holds polls in one Koa middleware, stores each write the same way and answers only after ' +
      "its commit, and keeps each device's position on the server, committed once its answer is written, as the hub keeps a " +
      "subscription's cursor: the least a server on the hub's stack does to keep its promises; a goal it is already at or " +
      'past, the floor stops (the goal column says where it stands). Wake-up: 1,000 devices each waiting on its ' +
      `own object, from sending the push to the device having its answer, after ${WARM_SAMPLES} samples not counted (the JIT warm). Fan-out: 1,000 devices on one object or waiting for a ` +
      'message to All, from sending the write to the last device answered, every device re-polling as soon as it has its answer' +
      (results.fanoutRounds
        ? ` (${results.fanoutRounds} rounds a turn for each subject, after ${WARM_ROUNDS} not counted). `
        : '. ') +
      'Memory: RSS growth per waiting poll, each on its own connection. Bare Node answers held polls from memory ' +
      '(bench/bareLongPoll.ts); Nchan 1.3 publishes over HTTP to long-poll subscribers (bench/nchan.ts).\n\n' +
      `${floorTable(results)}\n\n` +
      (results.signalr ? signalrSection(results.signalr, results.date) : '') +
      `## Where a push's time goes (the hub at 64 clients, self time)\n\n| Self | Function |\n|---|---|\n${profile}\n\n` +
      scenarios,
  );
}
