// Production entry point of the worker process (docker-compose `worker`): connects to Temporal
// and Postgres from the environment, makes sure the prediction refresh Schedule exists, and runs
// the workflows until SIGINT/SIGTERM.
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { createPool } from '../db/pool.js';
import { loadConfig } from '../platform/config.js';
import { createLogger } from '../platform/logger.js';
import { createWorker } from './create-worker.js';
import { installTemporalRuntime } from './runtime.js';
import { ensurePredictionRefreshSchedule } from './schedules.js';

const config = loadConfigOrExit();
const logger = createLogger({ level: config.LOG_LEVEL, name: 'worker' });
if (!config.DATABASE_URL || !config.TEMPORAL_ADDRESS) {
  logger.fatal('the worker needs DATABASE_URL and TEMPORAL_ADDRESS (for a local all-in-one run use `npm start`)');
  process.exit(1);
}
installTemporalRuntime(logger);
const pool = createPool(config.DATABASE_URL, {
  applicationName: 'card-delivery-worker',
  max: 20,
  onIdleError: (error) => logger.warn({ err: error }, 'idle database connection lost'),
});
const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
const worker = await createWorker({
  connection,
  namespace: config.TEMPORAL_NAMESPACE,
  taskQueue: config.TEMPORAL_TASK_QUEUE,
  pool,
  config,
});
await ensurePredictionRefreshSchedule(new Client({ connection, namespace: config.TEMPORAL_NAMESPACE }), {
  taskQueue: config.TEMPORAL_TASK_QUEUE,
  intervalMs: config.PREDICTION_REFRESH_INTERVAL,
  logger,
});
logger.info({ taskQueue: config.TEMPORAL_TASK_QUEUE, namespace: config.TEMPORAL_NAMESPACE }, 'worker started');
// Worker.run() handles SIGINT/SIGTERM itself: it stops polling and lets running tasks finish.
await worker.run();
await connection.close();
await pool.end();
logger.info('worker stopped');

function loadConfigOrExit() {
  try {
    return loadConfig();
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
}
