#!/usr/bin/env node
/**
 * Entry point: options from the environment (and --help/--version), start the hub, reload the
 * configuration on SIGHUP, stop cleanly on SIGINT/SIGTERM; or run `hub migrate`, `hub config export`
 * or `hub config import`.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigurationError } from './config/validate.js';
import type { Hub } from './createHub.js';
import { startHub } from './createHub.js';
import { DataDirectoryInUse, existingDataDirectory, lockDataDirectory } from './dataDirectory.js';
import path from 'node:path';
import { exportConfiguration, importConfiguration } from './hub/configuration/configurationSharedStart.js';
import type { Logger } from 'pino';
import { usageOf } from './cliUsage.js';
import type { FirstAdminKey } from './firstAdminKey.js';
import { forgetFirstAdminKey, keptFirstAdminKey } from './firstAdminKey.js';
import { createLogger } from './logger.js';
import { copyIntoSharedStore, openConfigurationDocuments, storeProblem } from './store/commands.js';
import { sharedStore } from './store/index.js';
import type { HubOptions } from './settings.js';
import { optionsFromEnvironment } from './settings.js';
import { HUB_VERSION } from './version.js';

/** How each command says it failed: the start's errors begin "hub did not start:", a command's with its name. */
function failWith(prefix: string): (message: string) => never {
  return (message) => {
    console.error(`${prefix}: ${message}`);
    process.exit(1);
  };
}

const fail: (message: string) => never = failWith('hub did not start');

type Command =
  { name: 'start' } | { name: 'migrate' } | { name: 'config'; action: 'export' | 'import'; file: string | undefined };

function command(positionals: string[]): Command {
  const [name, action, file, ...rest] = positionals;
  if (name === undefined) return { name: 'start' };
  if (name === 'migrate' && action === undefined) return { name };
  if (name === 'config' && (action === 'export' || action === 'import') && rest.length === 0)
    return { name, action, file };
  if (name === 'config' && action === undefined) throw new Error('hub config needs export or import');
  throw new Error(`Unknown command: ${positionals.join(' ')}`);
}

/** The command: start the hub, `migrate`, or `config export|import`; `--help` prints the help of the one named. */
function parseCommandLine(): Command {
  let values: { help?: boolean; version?: boolean };
  let positionals: string[] = [];
  let parsed: Command;
  try {
    ({ values, positionals } = parseArgs({
      options: { help: { type: 'boolean', short: 'h' }, version: { type: 'boolean', short: 'v' } },
      strict: true,
      allowPositionals: true,
    }));
    if (values.help) {
      process.stdout.write(usageOf(positionals));
      process.exit(0);
    }
    parsed = command(positionals);
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${usageOf(positionals)}`);
    process.exit(2);
  }
  if (values.version) {
    process.stdout.write(`${HUB_VERSION}\n`);
    process.exit(0);
  }
  return parsed;
}

/**
 * `hub config export [FILE]` and `hub config import [FILE]`: the configuration document of the database
 * HUB_DATABASE_URL out (stdout, or a new FILE) and in (FILE, default HUB_CONFIG), byte for byte.
 */
async function configCommand(
  options: HubOptions,
  action: 'export' | 'import',
  file: string | undefined,
): Promise<void> {
  const failed: (message: string) => never = failWith(`hub config ${action}`);
  if (!sharedStore(options))
    failed(`needs HUB_DATABASE_URL: without it the configuration is the file ${options.configPath}`);
  const source = file ?? options.configPath;
  let text: string | undefined;
  if (action === 'import') {
    try {
      text = fs.readFileSync(source, 'utf8');
    } catch (error) {
      failed((error as Error).message);
    }
  }
  let opened;
  try {
    opened = await openConfigurationDocuments(options, createLogger(options.logLevel));
  } catch (error) {
    failed(storeProblem(error, options) ?? (error as Error).message);
  }
  try {
    if (action === 'export') {
      const current = await exportConfiguration(opened.documents);
      if (current === undefined)
        failed('the database has no configuration yet (the first hub started on it imports one)');
      if (file === undefined) process.stdout.write(current as string);
      // Never over a file someone wrote: FILE must be new.
      else fs.writeFileSync(file, current as string, { flag: 'wx', mode: 0o600 });
    } else {
      const { version, changed } = await importConfiguration(opened.documents, text as string, '(hub config import)');
      console.log(
        changed
          ? `imported ${source}: configuration version ${version}, applied by every hub process on the database`
          : `${source} is the configuration already (version ${version}): nothing changed`,
      );
    }
  } catch (error) {
    await opened.close();
    failed(
      error instanceof ConfigurationError
        ? `${source}: ${error.message}`
        : (storeProblem(error, options) ?? (error as Error).message),
    );
  }
  await opened.close();
}

/**
 * `hub migrate`: HUB_DATA_DIR/hub.db into the empty database HUB_DATABASE_URL, the data directory held
 * meanwhile. A data directory without hub.db (a mistyped HUB_DATA_DIR) is named and left as it was.
 */
async function migrate(options: HubOptions): Promise<void> {
  const failed: (message: string) => never = failWith('hub migrate');
  const { dataDir } = options;
  if (!sharedStore(options)) failed('needs HUB_DATABASE_URL (the empty PostgreSQL database to copy into)');
  const sqliteFile = path.join(dataDir, 'hub.db');
  let found;
  try {
    found = existingDataDirectory(dataDir);
  } catch (error) {
    failed((error as Error).message);
  }
  if (!found) failed(`no data directory ${dataDir} (HUB_DATA_DIR): set HUB_DATA_DIR to the directory holding hub.db`);
  if (!fs.existsSync(sqliteFile))
    failed(`no hub.db in ${dataDir} (HUB_DATA_DIR): set HUB_DATA_DIR to the data directory of the hub to copy`);
  let lock;
  try {
    lock = lockDataDirectory(dataDir);
  } catch (error) {
    failed((error as Error).message);
  }
  try {
    const { copied, into } = await copyIntoSharedStore(options, sqliteFile, createLogger(options.logLevel));
    for (const [table, n] of Object.entries(copied)) console.log(`${table}: ${n}`);
    console.log(`copied into ${into}: start the hub with HUB_DATABASE_URL set`);
  } catch (error) {
    lock.release();
    failed(storeProblem(error, options) ?? (error as Error).message);
  }
  lock.release();
}

/**
 * Installed before "hub listening" is printed: whoever reads that line (a service manager, a test) may
 * signal at once, and a signal that arrives before its handler exists kills the process.
 */
function installSignalHandlers(hub: Hub, configPath: string, shared: boolean, logger: Logger): void {
  // As nginx and Mosquitto do: SIGHUP re-reads the configuration file (PostgreSQL: the database's
  // document, applying a posted one). A file that is not valid is logged and ignored; the running
  // configuration stays.
  process.on('SIGHUP', () => {
    logger.info(
      { signal: 'SIGHUP', file: shared ? undefined : configPath },
      shared ? 'reloading the configuration from the database' : 'reloading the configuration file',
    );
    hub.reloadConfiguration().then(
      (changed) => logger.info(changed ? 'configuration reloaded' : 'configuration unchanged: nothing to reload'),
      (error: unknown) =>
        // A file the operator is still editing is expected: one line saying what is wrong in it, no
        // stack trace. Anything else is a fault of the hub and keeps its stack.
        error instanceof ConfigurationError
          ? logger.error(
              { file: configPath, reason: error.message },
              `configuration not reloaded (${error.message}): the running configuration stays`,
            )
          : logger.error(
              { err: error, file: configPath },
              'configuration not reloaded: the running configuration stays',
            ),
    );
  });

  let signalled = false;
  const shutdown = (signal: string) => {
    if (signalled) return;
    signalled = true;
    logger.info({ signal }, 'stopping');
    const deadline = setTimeout(() => {
      logger.error('stop took too long; exiting');
      process.exit(1);
    }, 10_000);
    deadline.unref();
    hub.stop().then(
      () => {
        logger.info({ signal }, 'stopped');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'stop failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

async function main(): Promise<void> {
  const command = parseCommandLine();
  // hub.db, its WAL and the configuration file hold access keys: nothing the hub creates is for others.
  process.umask(0o077);
  const named = { start: 'hub did not start', migrate: 'hub migrate', config: 'hub config' }[command.name];
  const failed: (message: string) => never = failWith(named);
  let options;
  try {
    options = optionsFromEnvironment(process.env);
  } catch (error) {
    failed((error as Error).message);
  }
  if (command.name === 'migrate') return migrate(options);
  if (command.name === 'config') return configCommand(options, command.action, command.file);
  const logger = createLogger(options.logLevel);
  let hub;
  try {
    hub = await startHub(options, logger);
  } catch (error) {
    if (error instanceof DataDirectoryInUse) fail(error.message);
    const where = error instanceof ConfigurationError ? `configuration file ${options.configPath}: ` : '';
    const problem = storeProblem(error, options);
    const busy =
      (error as NodeJS.ErrnoException).code === 'EADDRINUSE'
        ? ': another program listens there. Stop it, or choose another port (HUB_PORT, or the listen URI in the configuration)'
        : '';
    console.error(`hub did not start: ${problem || `${where}${(error as Error).message}${busy}`}`);
    const kept = keptKey(options.dataDir);
    if (kept)
      console.error(
        `The first start's credential 'Admin' is kept: its access key ${kept.key} is in ${kept.file} (only you can read it), and the next start that succeeds shows it again.`,
      );
    process.exit(1);
  }
  const first = hub.firstAdminKey;
  if (first) {
    if (hub.generatedAdminKey)
      console.log(
        sharedStore(options)
          ? "First start: stored the configuration in the database with the credential 'Admin'."
          : `First start: wrote ${options.configPath} with the credential 'Admin'.`,
      );
    else console.log(`The first start did not succeed; the credential 'Admin' it created was kept in ${first.file}.`);
    console.log(`Its access key (not shown again): ${first.key}`);
    console.log(`Use it as AccessKey with SentinelName=Management on ${hub.url}/rest/management/..., e.g.`);
    console.log(
      `  curl "${hub.url}/rest/management/CheckAccess?SentinelName=Management&PackageName=Admin&AccessKey=${first.key}"`,
    );
    // Shown by a start that succeeded: not kept any longer (the configuration holds it).
    forgetFirstAdminKey(first);
  }
  installSignalHandlers(hub, options.configPath, sharedStore(options), logger);
  for (const url of hub.urls) console.log(`hub listening on ${url}`);
}

/** The key a first start kept, if any; nothing when the data directory cannot be read. */
function keptKey(dataDir: string): FirstAdminKey | undefined {
  try {
    return keptFirstAdminKey(dataDir);
  } catch {
    return undefined;
  }
}

void main();
