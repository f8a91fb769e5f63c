// Production entry point of an API process: config, Postgres pool, Temporal client, HTTP server,
// and a graceful shutdown on SIGINT/SIGTERM (stop accepting, finish in-flight requests, close).
import { Client, Connection } from '@temporalio/client';
import { createPool } from '../db/pool.js';
import { ConfigError, loadConfig } from '../platform/config.js';
import { createLogger } from '../platform/logger.js';
import { startApi } from './server.js';

const logger = createLogger({ name: 'api' });

async function main(): Promise<void> {
  const config = loadConfig();
  logger.level = config.LOG_LEVEL;
  if (!config.DATABASE_URL) throw new ConfigError('DATABASE_URL is required for a standalone API process (npm start sets it up)');
  if (!config.TEMPORAL_ADDRESS) throw new ConfigError('TEMPORAL_ADDRESS is required for a standalone API process (npm start sets it up)');

  const pool = createPool(config.DATABASE_URL, { applicationName: 'card-delivery-api' });
  pool.on('error', (error) => logger.error({ err: error }, 'idle Postgres client failed'));
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  const temporal = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
  const api = await startApi({ config, pool, temporal, logger });
  logger.info({ url: api.url }, 'API listening');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error('graceful shutdown timed out');
      process.exit(1);
    }, 15_000).unref();
    try {
      await api.close();
      await connection.close();
      await pool.end();
    } finally {
      clearTimeout(force);
      logger.flush();
    }
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error) => {
  logger.fatal({ err: error }, error instanceof ConfigError ? error.message : 'API failed to start');
  logger.flush();
  process.exitCode = 1;
});
