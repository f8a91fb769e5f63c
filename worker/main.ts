// Production entry point of the worker process (docker-compose `worker`): connects to Temporal
// and Postgres from the environment, makes sure the prediction refresh and delivery reconcile Schedules exist, and runs
// the workflows until SIGINT/SIGTERM.
import { Client } from '@temporalio/client';
import { loadConfig } from '../platform/config.js';
import { createLogger } from '../platform/logger.js';
import { openWorker } from './create-worker.js';
import { installTemporalRuntime } from './runtime.js';
import { ensureDeliveryReconcileSchedule, ensurePredictionRefreshSchedule } from './schedules.js';

const config = loadConfigOrExit();
const logger = createLogger({ level: config.LOG_LEVEL, name: 'worker' });
if (!config.DATABASE_URL || !config.TEMPORAL_ADDRESS) {
  logger.fatal('the worker needs DATABASE_URL and TEMPORAL_ADDRESS (for a local all-in-one run use `npm start`)');
  process.exit(1);
}
installTemporalRuntime(logger);
const { worker, connection, close } = await openWorker(config, { applicationName: 'card-delivery-worker', logger });
const client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
await ensurePredictionRefreshSchedule(client, {
  taskQueue: config.TEMPORAL_TASK_QUEUE,
  intervalMs: config.PREDICTION_REFRESH_INTERVAL,
  logger,
});
await ensureDeliveryReconcileSchedule(client, { taskQueue: config.TEMPORAL_TASK_QUEUE, logger });
logger.info({ taskQueue: config.TEMPORAL_TASK_QUEUE, namespace: config.TEMPORAL_NAMESPACE }, 'worker started');
// Worker.run() handles SIGINT/SIGTERM itself: it stops polling and lets running tasks finish.
await worker.run();
await close();
logger.info('worker stopped');

function loadConfigOrExit() {
  try {
    return loadConfig();
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
}
