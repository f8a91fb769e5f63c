// `npm run migrate`: applies pending migrations to DATABASE_URL and exits (docker-compose's
// one-shot `migrate` service; `npm start` migrates by itself).
import { loadConfig } from '../platform/config.js';
import { createLogger } from '../platform/logger.js';
import { migrate } from './migrate.js';

const config = loadConfig();
const logger = createLogger({ level: config.LOG_LEVEL, name: 'migrate' });
if (!config.DATABASE_URL) {
  logger.fatal('DATABASE_URL is not set');
  process.exit(1);
}
const applied = await migrate(config.DATABASE_URL, logger);
logger.info({ applied: applied.length }, applied.length ? 'migrations applied' : 'database already up to date');
