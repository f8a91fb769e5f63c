// Production entry point of the worker process (docker-compose `worker`): connects to Temporal
// and Postgres from the environment, makes sure the prediction refresh, delivery reconcile and retention Schedules exist, and runs
// the workflows until SIGINT/SIGTERM. Its metrics server (worker/metrics-server.ts, WORKER_METRICS_PORT)
// serves /metrics (ours and the Temporal SDK's), /healthz and /readyz.
// Draining (docs/operations.md "Draining"): on SIGTERM the SDK's runtime stops the worker polling
// (/readyz answers 503 from then on), running activities get WORKER_SHUTDOWN_GRACE to finish, then
// the metrics server and connections close and the process exits 0.
import v8 from 'node:v8';
import { loadConfig } from '../platform/config.js';
import { createLogger } from '../platform/logger.js';
import { startTracing, stopTracing } from '../platform/tracing.js';
import { createTemporalClient } from '../temporal/client.js';
import { openWorker } from './create-worker.js';
import { freeLocalPort, startWorkerMetricsServer } from './metrics-server.js';
import { installTemporalRuntime, sdkLogLevel } from './runtime.js';
import { ensureDeliveryReconcileSchedule, ensurePredictionRefreshSchedule, ensureRetentionSchedule } from './schedules.js';

// First: the worker and its clients take their tracing interceptors when they are made.
await startTracing('card-delivery-worker');
const config = loadConfigOrExit();
const logger = createLogger({ level: config.LOG_LEVEL, name: 'worker' });
if (!config.DATABASE_URL || !config.TEMPORAL_ADDRESS) {
  logger.fatal('the worker needs DATABASE_URL and TEMPORAL_ADDRESS (for a local all-in-one run use `npm start`)');
  process.exit(1);
}
// The SDK's Prometheus exporter listens on a free local port; the metrics server merges it.
const sdkMetricsAddress = `127.0.0.1:${await freeLocalPort()}`;
// The activities' and workflows' own lines at LOG_LEVEL (`webhook delivered` at debug).
installTemporalRuntime(logger, sdkLogLevel(config.LOG_LEVEL), { sdkMetricsAddress });
const { worker, connection, pool, close } = await openWorker(config, { applicationName: 'card-delivery-worker', logger });
const metrics = await startWorkerMetricsServer({
  port: config.WORKER_METRICS_PORT,
  host: config.HOST,
  pool,
  logger,
  ready: () => worker.getState() === 'RUNNING',
  sdkMetricsUrl: `http://${sdkMetricsAddress}/metrics`,
});
logger.info({ url: metrics.url }, 'worker metrics listening');
const client = createTemporalClient({ connection, namespace: config.TEMPORAL_NAMESPACE });
await ensurePredictionRefreshSchedule(client, {
  taskQueue: config.TEMPORAL_TASK_QUEUE,
  intervalMs: config.PREDICTION_REFRESH_INTERVAL,
  logger,
});
await ensureDeliveryReconcileSchedule(client, { taskQueue: config.TEMPORAL_TASK_QUEUE, logger });
await ensureRetentionSchedule(client, { taskQueue: config.TEMPORAL_TASK_QUEUE, logger });
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () =>
    logger.info({ signal, grace_ms: config.WORKER_SHUTDOWN_GRACE }, 'draining: polling stopped, running activities finishing'),
  );
}
// The V8 heap limit of this thread (the SDK's workflow thread inherits the same flags): the
// worker's memory is sized by it and the cache (docs/maintenance.md "Scaling and tuning").
const heapLimitMiB = Math.round(v8.getHeapStatistics().heap_size_limit / 1048576);
logger.info(
  {
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    namespace: config.TEMPORAL_NAMESPACE,
    max_cached_workflows: config.WORKER_MAX_CACHED_WORKFLOWS,
    heap_limit_mib: heapLimitMiB,
  },
  'worker started',
);
// Worker.run() handles SIGINT/SIGTERM itself (the SDK's runtime): it stops polling and lets running
// tasks finish within shutdownGraceTime.
await worker.run();
await metrics.close();
await close();
await stopTracing();
logger.info('worker stopped');

function loadConfigOrExit() {
  try {
    return loadConfig();
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
}
