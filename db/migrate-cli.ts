// `npm run migrate`: applies pending migrations to DATABASE_URL and exits (docker-compose's
// one-shot `migrate` service; `npm start` migrates by itself).
import { ConfigError, exitOnStartupError, loadConfig } from '../platform/config.js';
import { databaseStartupError } from '../platform/dependency-errors.js';
import { createLogger } from '../platform/logger.js';
import { migrate } from './migrate.js';

// A bad or missing variable: one line on stderr naming it, exit code 1 (docs/configuration.md "When a process does not start").
const { DATABASE_URL: databaseUrl, LOG_LEVEL } = (() => {
  try {
    const { DATABASE_URL, ...config } = loadConfig();
    if (!DATABASE_URL) throw new ConfigError({ variable: 'DATABASE_URL', problem: 'is required to migrate' });
    return { ...config, DATABASE_URL };
  } catch (error) {
    exitOnStartupError(error);
    throw error;
  }
})();
const logger = createLogger({ level: LOG_LEVEL, name: 'migrate' });
const applied = await migrate(databaseUrl, logger).catch((error: unknown) => {
  // The database unreachable or refusing the connection: one line naming DATABASE_URL, exit code 1.
  logger.flush();
  exitOnStartupError(databaseStartupError(error, databaseUrl));
  throw error;
});
logger.info({ applied: applied.length }, applied.length ? 'migrations applied' : 'database already up to date');
