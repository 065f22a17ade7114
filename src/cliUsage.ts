/** What `hub --help` and each command's `--help` print (cli.ts). */

const ENVIRONMENT = `Everything else is configured by environment variables (README.md, "Configuration"), e.g.
  HUB_DATA_DIR      data directory (default ./data): hub.db, the configuration file, packages
  HUB_CONFIG        configuration file (default HUB_DATA_DIR/hub.config.xml)
  HUB_DATABASE_URL  postgres://user@host:port/database: the store on PostgreSQL instead of hub.db
  HUB_PORT          overrides the port of the configuration's listen URI
  HUB_LOG_LEVEL     fatal, error, warn, info (default), debug, trace or silent
`;

const HOW = `From the checkout, run it as \`npx hub …\` (or \`node dist/src/cli.js …\`); \`npm install -g .\`
there puts \`hub\` on the PATH.
`;

const GENERAL = `Usage: hub [--help] [--version]
       hub migrate
       hub config export [FILE]
       hub config import [FILE]
       hub COMMAND --help   that command's help

Starts the hub: the consumer, platform and management REST interfaces over one SQLite file (or a
PostgreSQL database, HUB_DATABASE_URL). The first start writes the configuration with the credential
'Admin' and prints its access key; the key is kept in HUB_DATA_DIR/first-admin-key (only you can read
it) and shown again by every start until one succeeds.
  migrate        copy HUB_DATA_DIR/hub.db into the empty PostgreSQL database HUB_DATABASE_URL
  config export  print (or write to FILE) the configuration stored in HUB_DATABASE_URL
  config import  make FILE the configuration of every hub process on HUB_DATABASE_URL

${ENVIRONMENT}
Signals: SIGHUP reloads the configuration (the file; on PostgreSQL, the database's); SIGINT (Ctrl-C)
and SIGTERM stop the hub cleanly.

Options:
  -h, --help     print this help and exit
  -v, --version  print the version and exit

${HOW}`;

const MIGRATE = `Usage: HUB_DATA_DIR=DIR HUB_DATABASE_URL=postgres://user@host:port/database hub migrate

Copies the hub's SQLite database DIR/hub.db (and its package archives, DIR/repository/) into the
PostgreSQL database HUB_DATABASE_URL, in one transaction; then start the hub with HUB_DATABASE_URL set.
Stop the hub on DIR first: it refuses a data directory a hub is running on. The database must hold
nothing else: create one of its own (createdb), since it refuses a database with rows of a hub or with
any table that is not the hub's, changing nothing (docs/operations.md, "Moving house").

${HOW}`;

const CONFIG = `Usage: HUB_DATABASE_URL=postgres://user@host:port/database hub config export [FILE]
       HUB_DATABASE_URL=postgres://user@host:port/database hub config import [FILE]

With HUB_DATABASE_URL the configuration lives in the database, shared by every hub process on it
(docs/configuration.md, "On PostgreSQL").
  export [FILE]  prints the configuration document byte for byte, or writes it to FILE (a new file only)
  import [FILE]  checks FILE (default HUB_CONFIG, else HUB_DATA_DIR/hub.config.xml) as a start would
                 and makes it the configuration every running process applies; an invalid file changes
                 nothing and exits 1

${HOW}`;

const EXPORT = `Usage: HUB_DATABASE_URL=postgres://user@host:port/database hub config export [FILE]

Prints the configuration document stored in the database HUB_DATABASE_URL byte for byte, or writes
it to FILE, which must not exist yet (never over a file someone wrote). Exits 1 when the database has
no configuration yet (the first hub started on it stores one).

${HOW}`;

const IMPORT = `Usage: HUB_DATABASE_URL=postgres://user@host:port/database hub config import [FILE]

Checks FILE (default HUB_CONFIG, else HUB_DATA_DIR/hub.config.xml) as a start would, and makes it the
configuration document of the database HUB_DATABASE_URL: every hub process running on it applies it.
A file that would not start a hub changes nothing and exits 1.

${HOW}`;

/** The help of the command `words` name (`[]`, `['migrate']`, `['config', 'export']`…). */
export function usageOf(words: string[]): string {
  const [name, action] = words;
  if (name === 'migrate') return MIGRATE;
  if (name === 'config' && action === 'export') return EXPORT;
  if (name === 'config' && action === 'import') return IMPORT;
  if (name === 'config') return CONFIG;
  return GENERAL;
}
