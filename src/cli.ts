/** Entry point: options from the environment, start the hub, stop cleanly on SIGINT/SIGTERM. */
import { ConfigurationError } from './config/validate.js';
import { startHub } from './createHub.js';
import { createLogger } from './logger.js';
import { optionsFromEnvironment } from './settings.js';

function fail(message: string): never {
  console.error(`hub did not start: ${message}`);
  process.exit(1);
}

async function main(): Promise<void> {
  let options;
  try {
    options = optionsFromEnvironment(process.env);
  } catch (error) {
    fail((error as Error).message);
  }
  const logger = createLogger(options.logLevel);
  let hub;
  try {
    hub = await startHub(options, logger);
  } catch (error) {
    const where = error instanceof ConfigurationError ? `configuration file ${options.configPath}: ` : '';
    fail(`${where}${(error as Error).message}`);
  }
  if (hub.generatedAdminKey) {
    console.log(`First start: wrote ${options.configPath} with the credential 'Admin'.`);
    console.log(`Its access key (shown only this once): ${hub.generatedAdminKey}`);
    console.log(`Use it as AccessKey with SentinelName=Management on ${hub.url}/rest/management/..., e.g.`);
    console.log(`  curl "${hub.url}/rest/management/CheckAccess?SentinelName=Management&PackageName=Admin&AccessKey=${hub.generatedAdminKey}"`);
  }
  console.log(`hub listening on ${hub.url}`);

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

void main();
