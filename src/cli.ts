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
import { DataDirectoryInUse, lockDataDirectory } from './db/dataDirectory.js';
import path from 'node:path';
import { exportConfiguration, importConfiguration } from './hub/configurationSharedStart.js';
import type { Logger } from 'pino';
import { createLogger } from './logger.js';
import type { HubOptions } from './settings.js';
import { optionsFromEnvironment } from './settings.js';
import { HUB_VERSION } from './version.js';

const USAGE = `Usage: hub [--help] [--version]
       hub migrate
       hub config export [FILE]
       hub config import [FILE]

Starts the hub: the consumer, platform and management REST interfaces over one SQLite file (or a
PostgreSQL database, HUB_DATABASE_URL). \`hub migrate\` copies HUB_DATA_DIR/hub.db, with the hub on it
stopped, into the empty PostgreSQL database HUB_DATABASE_URL (docs/operations.md).
With HUB_DATABASE_URL the configuration lives in the database (docs/configuration.md): \`hub config
export\` prints it (or writes FILE, which must not exist yet), \`hub config import\` checks FILE (default
HUB_CONFIG) as a start would and makes it the configuration of every hub process on that database.
Everything else is configured by environment variables (README.md, "Configuration"), e.g.
  HUB_DATA_DIR   data directory (default ./data): hub.db, the configuration file, packages
  HUB_CONFIG     configuration file (default HUB_DATA_DIR/hub.config.xml)
  HUB_PORT       overrides the port of the configuration's listen URI
  HUB_LOG_LEVEL  fatal, error, warn, info (default), debug, trace or silent

Signals: SIGHUP reloads the configuration (the file; on PostgreSQL, the database's); SIGINT and SIGTERM stop the hub cleanly.

Options:
  -h, --help     print this help and exit
  -v, --version  print the version and exit
`;

function fail(message: string): never {
  console.error(`hub did not start: ${message}`);
  process.exit(1);
}

type Command =
  { name: 'start' } | { name: 'migrate' } | { name: 'config'; action: 'export' | 'import'; file: string | undefined };

function command(positionals: string[]): Command {
  const [name, action, file, ...rest] = positionals;
  if (name === undefined) return { name: 'start' };
  if (name === 'migrate' && action === undefined) return { name };
  if (name === 'config' && (action === 'export' || action === 'import') && rest.length === 0)
    return { name, action, file };
  throw new Error(`Unknown command: ${positionals.join(' ')}`);
}

/** The command: start the hub, `migrate`, or `config export|import`. */
function parseCommandLine(): Command {
  let values: { help?: boolean; version?: boolean };
  let parsed: Command;
  try {
    let positionals: string[];
    ({ values, positionals } = parseArgs({
      options: { help: { type: 'boolean', short: 'h' }, version: { type: 'boolean', short: 'v' } },
      strict: true,
      allowPositionals: true,
    }));
    parsed = command(positionals);
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
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
  const failed: (message: string) => never = (message) => {
    console.error(`hub config ${action}: ${message}`);
    process.exit(1);
  };
  if (options.databaseUrl === undefined)
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
    const { openConfigurationDocuments } = await import('./store/postgres/configuration.js');
    opened = await openConfigurationDocuments({
      url: options.databaseUrl,
      sync: 'full',
      lockWaitMs: options.lockWaitMs,
      log: createLogger(options.logLevel),
    });
  } catch (error) {
    failed((error as Error).message);
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
    failed(error instanceof ConfigurationError ? `${source}: ${error.message}` : (error as Error).message);
  }
  await opened.close();
}

/** `hub migrate`: HUB_DATA_DIR/hub.db into the empty database HUB_DATABASE_URL, the data directory held meanwhile. */
async function migrate(options: HubOptions): Promise<void> {
  if (options.databaseUrl === undefined)
    fail('hub migrate needs HUB_DATABASE_URL (the empty PostgreSQL database to copy into)');
  let lock;
  try {
    lock = lockDataDirectory(options.dataDir);
  } catch (error) {
    fail((error as Error).message);
  }
  try {
    const { copySqliteToPostgres } = await import('./store/postgres/fromSqlite.js');
    const report = await copySqliteToPostgres({
      sqliteFile: path.join(options.dataDir, 'hub.db'),
      url: options.databaseUrl,
      log: createLogger(options.logLevel),
    });
    for (const [table, n] of Object.entries(report)) console.log(`${table}: ${n}`);
    console.log(
      `copied into ${options.databaseUrl.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@')}: start the hub with HUB_DATABASE_URL set`,
    );
  } catch (error) {
    lock.release();
    fail((error as Error).message);
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
      () => process.exit(0),
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
  let options;
  try {
    options = optionsFromEnvironment(process.env);
  } catch (error) {
    fail((error as Error).message);
  }
  if (command.name === 'migrate') return migrate(options);
  if (command.name === 'config') return configCommand(options, command.action, command.file);
  const logger = createLogger(options.logLevel);
  let hub;
  try {
    hub = await startHub(options, logger);
  } catch (error) {
    const where = error instanceof ConfigurationError ? `configuration file ${options.configPath}: ` : '';
    fail(error instanceof DataDirectoryInUse ? error.message : `${where}${(error as Error).message}`);
  }
  if (hub.generatedAdminKey) {
    console.log(
      options.databaseUrl
        ? "First start: stored the configuration in the database with the credential 'Admin'."
        : `First start: wrote ${options.configPath} with the credential 'Admin'.`,
    );
    console.log(`Its access key (shown only this once): ${hub.generatedAdminKey}`);
    console.log(`Use it as AccessKey with SentinelName=Management on ${hub.url}/rest/management/..., e.g.`);
    console.log(
      `  curl "${hub.url}/rest/management/CheckAccess?SentinelName=Management&PackageName=Admin&AccessKey=${hub.generatedAdminKey}"`,
    );
  }
  installSignalHandlers(hub, options.configPath, options.databaseUrl !== undefined, logger);
  for (const url of hub.urls) console.log(`hub listening on ${url}`);
}

void main();
