// Builds the Temporal worker that runs dispatch workflows and their activities. Used by the
// production entry point (worker/main.ts), by `npm start` and by the tests, which pass a workflow
// bundle built once (bundleWorkflowCode) instead of bundling per worker.
import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { NativeConnection, Worker, type WorkflowBundleOption } from '@temporalio/worker';
import { createActivities } from '../activities/index.js';
import type { Pool } from '../db/pool.js';
import type { Config } from '../platform/config.js';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export interface WorkerDeps {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  pool: Pool;
  config: Config;
  /** A prebuilt bundle (tests); when absent the worker bundles workflows/ at start-up. */
  workflowBundle?: WorkflowBundleOption;
}

export async function createWorker(deps: WorkerDeps): Promise<Worker> {
  return Worker.create({
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue,
    ...(deps.workflowBundle ? { workflowBundle: deps.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
    // The prediction refresh signals dispatch workflows through a client on the worker's connection.
    activities: createActivities({
      pool: deps.pool,
      config: deps.config,
      temporal: new Client({ connection: deps.connection, namespace: deps.namespace }),
    }),
    // Long-lived entity workflows are mostly idle: keep many cached, run activities concurrently.
    maxCachedWorkflows: 2000,
    maxConcurrentActivityTaskExecutions: 200,
    maxConcurrentWorkflowTaskExecutions: 100,
    shutdownGraceTime: '10 seconds',
  });
}
