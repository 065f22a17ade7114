/**
 * Entry point: options from the environment (and --help/--version), start the hub, reload the
 * configuration file on SIGHUP, stop cleanly on SIGINT/SIGTERM.
 */
import { parseArgs } from 'node:util';
import { ConfigurationError } from './config/validate.js';
import type { Hub } from './createHub.js';
import { startHub } from './createHub.js';
import { DataDirectoryInUse, lockDataDirectory } from './db/dataDirectory.js';
import path from 'node:path';
import { copySqliteToPostgres } from './store/postgres/fromSqlite.js';
import type { Logger } from 'pino';
import { createLogger } from './logger.js';
import type { HubOptions } from './settings.js';
import { optionsFromEnvironment } from './settings.js';
import { HUB_VERSION } from './version.js';

const USAGE = `Usage: hub [--help] [--version]
       hub migrate

Starts the hub: the consumer, platform and management REST interfaces over one SQLite file (or a
PostgreSQL database, HUB_DATABASE_URL). \`hub migrate\` copies HUB_DATA_DIR/hub.db, with the hub on it
stopped, into the empty PostgreSQL database HUB_DATABASE_URL (docs/operations.md).
Everything else is configured by environment variables (README.md, "Configuration"), e.g.
  HUB_DATA_DIR   data directory (default ./data): hub.db, the configuration file, packages
  HUB_CONFIG     configuration file (default HUB_DATA_DIR/hub.config.xml)
  HUB_PORT       overrides the port of the configuration's listen URI
  HUB_LOG_LEVEL  fatal, error, warn, info (default), debug, trace or silent

Signals: SIGHUP reloads the configuration file; SIGINT and SIGTERM stop the hub cleanly.

Options:
  -h, --help     print this help and exit
  -v, --version  print the version and exit
`;

function fail(message: string): never {
  console.error(`hub did not start: ${message}`);
  process.exit(1);
}

/** The command: start the hub, or `migrate`. */
function parseCommandLine(): 'start' | 'migrate' {
  let values: { help?: boolean; version?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      options: { help: { type: 'boolean', short: 'h' }, version: { type: 'boolean', short: 'v' } },
      strict: true,
      allowPositionals: true,
    }));
    if (positionals.length > 1 || (positionals.length === 1 && positionals[0] !== 'migrate')) {
      throw new Error(`Unknown command: ${positionals.join(' ')}`);
    }
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
  return positionals[0] === 'migrate' ? 'migrate' : 'start';
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
function installSignalHandlers(hub: Hub, configPath: string, logger: Logger): void {
  // As nginx and Mosquitto do: SIGHUP re-reads the configuration file. A file that is not valid is
  // logged and ignored; the running configuration stays.
  process.on('SIGHUP', () => {
    logger.info({ signal: 'SIGHUP', file: configPath }, 'reloading the configuration file');
    hub.reloadConfiguration().then(
      (changed) => logger.info(changed ? 'configuration reloaded' : 'configuration file unchanged: nothing to reload'),
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
  if (command === 'migrate') return migrate(options);
  const logger = createLogger(options.logLevel);
  let hub;
  try {
    hub = await startHub(options, logger);
  } catch (error) {
    const where = error instanceof ConfigurationError ? `configuration file ${options.configPath}: ` : '';
    fail(error instanceof DataDirectoryInUse ? error.message : `${where}${(error as Error).message}`);
  }
  if (hub.generatedAdminKey) {
    console.log(`First start: wrote ${options.configPath} with the credential 'Admin'.`);
    console.log(`Its access key (shown only this once): ${hub.generatedAdminKey}`);
    console.log(`Use it as AccessKey with SentinelName=Management on ${hub.url}/rest/management/..., e.g.`);
    console.log(
      `  curl "${hub.url}/rest/management/CheckAccess?SentinelName=Management&PackageName=Admin&AccessKey=${hub.generatedAdminKey}"`,
    );
  }
  installSignalHandlers(hub, options.configPath, logger);
  for (const url of hub.urls) console.log(`hub listening on ${url}`);
}

void main();
