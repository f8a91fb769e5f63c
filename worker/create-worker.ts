// Builds the Temporal worker that runs dispatch workflows and their activities. Used by the
// production entry point (worker/main.ts), by `npm start` and by the tests, which pass a workflow
// bundle built once (bundleWorkflowCode) instead of bundling per worker.
import { NativeConnection, Worker, type WorkerOptions, type WorkflowBundleOption } from '@temporalio/worker';
import { createActivities } from '../activities/index.js';
import { AreaStatisticsCache } from '../db/area-statistics-cache.js';
import { createPool, DatabaseReachability, type Pool } from '../db/pool.js';
import type { Config } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import { temporalWorkerTracing } from '../platform/tracing.js';
import { createTemporalClient } from '../temporal/client.js';
import { temporalConnectionOptions } from '../temporal/connection-options.js';
import { workflowBundleFile } from './workflow-bundle.js';

export { WORKFLOWS_PATH } from './workflows-path.js';

export interface WorkerDeps {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  pool: Pool;
  config: Config;
  /**
   * A prebuilt bundle (tests); when absent, the one `npm run build` wrote (the compiled tree, the
   * image), else workflows/ is bundled at start-up in a child process (worker/workflow-bundle.ts).
   */
  workflowBundle?: WorkflowBundleOption;
  /** The area levels' cache, listening for changes (openWorker starts it); without it, every prediction reads them. */
  areaStatistics?: AreaStatisticsCache;
  /**
   * `npm start` only: the loopback origin of its demo receiver, for the demo endpoint's id
   * (cli/demo-receiver.ts); a worker process never has one.
   */
  loopbackOriginFor?: (endpointId: string) => string | undefined;
}

export async function createWorker(deps: WorkerDeps): Promise<Worker> {
  const tracing = temporalWorkerTracing();
  if (deps.workflowBundle) return createWorkerWith(deps, deps.workflowBundle, tracing);
  // The workflow interceptors of tracing go into the bundle itself.
  const bundle = await workflowBundleFile(tracing?.interceptors.workflowModules ?? []);
  try {
    return await createWorkerWith(deps, { codePath: bundle.codePath }, tracing);
  } finally {
    await bundle.dispose();
  }
}

function createWorkerWith(
  deps: WorkerDeps,
  workflowBundle: WorkflowBundleOption,
  tracing: ReturnType<typeof temporalWorkerTracing>,
): Promise<Worker> {
  return Worker.create({
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue,
    workflowBundle,
    // The prediction refresh signals dispatch workflows through a client on the worker's connection.
    activities: createActivities({
      pool: deps.pool,
      config: deps.config,
      areaStatistics: deps.areaStatistics,
      loopbackOriginFor: deps.loopbackOriginFor,
      temporal: createTemporalClient({ connection: deps.connection, namespace: deps.namespace }),
    }),
    ...workerTuning(deps.config),
    // On SIGTERM: running activities get this long to finish before they are cancelled (docs/operations.md "Draining").
    shutdownGraceTime: deps.config.WORKER_SHUTDOWN_GRACE,
    // Tracing on (platform/tracing.ts): the activity interceptors and the workflow span sink. The
    // workflow interceptors are in the bundle (a prebuilt one, in tests, has what it was built with).
    ...(tracing && {
      interceptors: { ...tracing.interceptors, workflowModules: [] },
      sinks: tracing.sinks,
    }),
  });
}

/**
 * The worker's tuning from the configuration (docs/maintenance.md "Scaling and tuning"; measured in
 * bench/webhook-latency). Long-lived entity workflows are mostly idle: keep many cached, run
 * activities concurrently.
 */
export function workerTuning(config: Config) {
  return {
    maxCachedWorkflows: config.WORKER_MAX_CACHED_WORKFLOWS,
    maxConcurrentWorkflowTaskExecutions: config.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS,
    maxConcurrentActivityTaskExecutions: config.WORKER_MAX_CONCURRENT_ACTIVITIES,
    maxConcurrentLocalActivityExecutions: config.WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES,
    workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: config.WORKER_WORKFLOW_TASK_POLLERS },
    activityTaskPollerBehavior: { type: 'simple-maximum', maximum: config.WORKER_ACTIVITY_TASK_POLLERS },
    nonStickyToStickyPollRatio: config.WORKER_NONSTICKY_POLL_RATIO,
    stickyQueueScheduleToStartTimeout: config.WORKER_STICKY_QUEUE_TIMEOUT,
    workflowThreadPoolSize: config.WORKER_WORKFLOW_THREADS,
  } satisfies Partial<WorkerOptions>;
}

export interface OpenedWorker {
  worker: Worker;
  connection: NativeConnection;
  /** The worker's database pool (its activities', and the metrics server's pending-deliveries read). */
  pool: Pool;
  /** After worker.run() has resolved: closes the Temporal connection and the database pool. */
  close(): Promise<void>;
}

/**
 * A worker process's worker (worker/main.ts, and the test and benchmark processes that stand for it):
 * its own Postgres pool (WORKER_DATABASE_POOL_MAX) and Temporal connection, from the configuration.
 */
export async function openWorker(
  config: Config,
  options: { applicationName: string; logger: Logger; workflowBundle?: WorkflowBundleOption },
): Promise<OpenedWorker> {
  if (!config.DATABASE_URL || !config.TEMPORAL_ADDRESS) throw new Error('a worker process needs DATABASE_URL and TEMPORAL_ADDRESS');
  const reachability = new DatabaseReachability(options.logger, 'activities fail and Temporal retries them until it is back');
  const pool = createPool(config.DATABASE_URL, {
    applicationName: options.applicationName,
    max: config.WORKER_DATABASE_POOL_MAX,
    reachability,
    onIdleError: (error) => options.logger.warn({ err: error }, 'idle database connection lost'),
  });
  const connection = await NativeConnection.connect(temporalConnectionOptions(config.TEMPORAL_ADDRESS, config));
  // Its reconnects fail once a second in an outage: the pool's one line says so.
  const areaStatistics = new AreaStatisticsCache(pool, config.DATABASE_URL, (error) => {
    if (!reachability.failed(error))
      options.logger.warn({ err: error }, 'area statistics listener lost; predictions read every time until it is back');
  });
  await areaStatistics.start();
  const worker = await createWorker({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    pool,
    config,
    workflowBundle: options.workflowBundle,
    areaStatistics,
  });
  return {
    worker,
    connection,
    pool,
    close: async () => {
      await areaStatistics.stop();
      await connection.close();
      await pool.end();
    },
  };
}
