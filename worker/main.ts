// Production entry point of the worker process (docker-compose `worker`): connects to Temporal
// and Postgres from the environment, makes sure the prediction refresh, delivery reconcile and retention Schedules exist, and runs
// the workflows until SIGINT/SIGTERM. Its metrics server (worker/metrics-server.ts, WORKER_METRICS_PORT)
// serves /metrics (ours and the Temporal SDK's), /healthz and /readyz.
// Draining (docs/operations.md "Draining"): on SIGTERM the SDK's runtime stops the worker polling
// (/readyz answers 503 from then on), running activities get WORKER_SHUTDOWN_GRACE to finish, then
// the metrics server and connections close and the process exits 0. A bad variable or a port in use
// stops start-up with one line on stderr naming the variable, and exit code 1 (docs/configuration.md "When a process does not start").
import v8 from 'node:v8';
import { ConfigError, exitOnStartupError, loadConfig } from '../platform/config.js';
import { temporalStartupError } from '../platform/dependency-errors.js';
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
// The SDK's Prometheus exporter listens on a free local port; the metrics server merges it.
const sdkMetricsAddress = `127.0.0.1:${await freeLocalPort()}`;
// The activities' and workflows' own lines at LOG_LEVEL (`webhook delivered` at debug).
installTemporalRuntime(logger, sdkLogLevel(config.LOG_LEVEL), { sdkMetricsAddress });
/** Ends start-up on a failure an operator can act on: one line on stderr, exit 1; else rethrows. */
const startupFailed = (error: unknown): never => {
  logger.flush();
  exitOnStartupError(error); // a TEMPORAL_TLS_* file that cannot be read, WORKER_METRICS_PORT in use
  // Temporal not answering, or without the namespace: the orchestrator starts the worker again.
  exitOnStartupError(temporalStartupError(error, config.TEMPORAL_ADDRESS, config.TEMPORAL_NAMESPACE));
  throw error;
};
const { worker, connection, pool, close } = await openWorker(config, { applicationName: 'card-delivery-worker', logger }).catch(
  startupFailed,
);
const metrics = await startWorkerMetricsServer({
  port: config.WORKER_METRICS_PORT,
  host: config.HOST,
  pool,
  logger,
  ready: () => worker.getState() === 'RUNNING',
  sdkMetricsUrl: `http://${sdkMetricsAddress}/metrics`,
}).catch(startupFailed);
logger.info({ url: metrics.url }, 'worker metrics listening');
const client = createTemporalClient({ connection, namespace: config.TEMPORAL_NAMESPACE });
await (async () => {
  await ensurePredictionRefreshSchedule(client, { taskQueue: config.TEMPORAL_TASK_QUEUE, intervalMs: config.PREDICTION_REFRESH_INTERVAL, logger }); // prettier-ignore
  await ensureDeliveryReconcileSchedule(client, { taskQueue: config.TEMPORAL_TASK_QUEUE, logger });
  await ensureRetentionSchedule(client, { taskQueue: config.TEMPORAL_TASK_QUEUE, logger });
})().catch(startupFailed);
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

/** The configuration, with DATABASE_URL and TEMPORAL_ADDRESS; else one line on stderr and exit 1. */
function loadConfigOrExit() {
  try {
    const loaded = loadConfig();
    const { DATABASE_URL, TEMPORAL_ADDRESS } = loaded;
    if (DATABASE_URL && TEMPORAL_ADDRESS) return { ...loaded, DATABASE_URL, TEMPORAL_ADDRESS };
    const problem = 'is required for a standalone worker (npm start sets it up)';
    throw new ConfigError([
      ...(DATABASE_URL ? [] : [{ variable: 'DATABASE_URL', problem }]),
      ...(TEMPORAL_ADDRESS ? [] : [{ variable: 'TEMPORAL_ADDRESS', problem }]),
    ]);
  } catch (error) {
    exitOnStartupError(error);
    throw error;
  }
}
