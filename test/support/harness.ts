// A running service for integration tests: a real worker (on its own task queue) and a real API
// process (on a free port) against the Temporal dev server and Postgres that global-setup started.
// Also creates issuers and keys straight in the database, as the admin CLI would.
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { startApi } from '../../api/server.js';
import { createPool, type Pool } from '../../db/pool.js';
import { createApiKey, createIssuer, revokeApiKey } from '../../db/issuers.js';
import { SCOPES, type KeyMode, type Scope } from '../../domain/api-keys.js';
import { loadConfig, type Config } from '../../platform/config.js';
import { createWorker } from '../../worker/create-worker.js';
import { installTemporalRuntime } from '../../worker/runtime.js';
import { randomId, requireTestEnv, testLogger } from './env.js';

export { randomId, requireTestEnv, testLogger };

export interface Harness {
  baseUrl: string;
  pool: Pool;
  temporal: Client;
  config: Config;
  taskQueue: string;
  createIssuer(name?: string): Promise<string>;
  createKey(issuerId: string, options?: { scopes?: Scope[]; mode?: KeyMode }): Promise<{ id: string; key: string }>;
  revokeKey(keyId: string): Promise<void>;
  /** Starts one more API process on the same database and Temporal (for multi-process tests). */
  startExtraApi(env?: Record<string, string>): Promise<{ baseUrl: string; close(): Promise<void> }>;
  stop(): Promise<void>;
}

export async function startHarness(options: { env?: Record<string, string>; worker?: boolean } = {}): Promise<Harness> {
  const taskQueue = randomId('test');
  const baseEnv = {
    ...process.env,
    DATABASE_URL: requireTestEnv('TEST_DATABASE_URL'),
    TEMPORAL_ADDRESS: requireTestEnv('TEST_TEMPORAL_ADDRESS'),
    TEMPORAL_TASK_QUEUE: taskQueue,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // Every test file's keyless requests come from 127.0.0.1 and share its window in the one
    // Postgres: tests of that limit set it (test/api/unauthenticated-limit.test.ts).
    RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '1000000',
    // The same for the tracking page's per-IP window (test/api/tracking-page.test.ts tests that limit).
    TRACKING_PAGE_RATE_PER_MINUTE: '1000000',
    ...options.env,
  };
  const config = loadConfig(baseEnv);
  const logger = testLogger('harness');
  const pool = createPool(config.DATABASE_URL!, { applicationName: 'test-harness' });
  const retries = settlingRetries();
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS!, interceptors: [retries.interceptor] });
  const temporal = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });

  let worker: Worker | undefined;
  let workerRun: Promise<void> | undefined;
  let workerConnection: NativeConnection | undefined;
  if (options.worker !== false) {
    // Only with a worker: the SDK's native runtime ends with its last worker, and one that no
    // worker ever used kept the Jest process alive after the file's last test.
    installTemporalRuntime(logger, 'WARN');
    workerConnection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS! });
    worker = await createWorker({
      connection: workerConnection,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue,
      pool,
      config,
      workflowBundle: { codePath: requireTestEnv('TEST_WORKFLOW_BUNDLE') },
    });
    workerRun = worker.run();
  }
  const api = await startApi({ config, pool, temporal, logger: testLogger('api'), port: 0, host: '127.0.0.1' });
  const extras: Array<{ close(): Promise<void> }> = [];

  return {
    baseUrl: api.url,
    pool,
    temporal,
    config,
    taskQueue,
    async createIssuer(name = 'Test Issuer') {
      return (await createIssuer(pool, name)).id;
    },
    async createKey(issuerId, keyOptions = {}) {
      const created = await createApiKey(pool, { issuerId, scopes: keyOptions.scopes ?? [...SCOPES], mode: keyOptions.mode ?? 'live' });
      if (!created) throw new Error(`no issuer ${issuerId}`);
      return { id: created.id, key: created.key };
    },
    async revokeKey(keyId) {
      await revokeApiKey(pool, keyId);
    },
    async startExtraApi(env = {}) {
      const extraConfig = loadConfig({ ...baseEnv, ...env });
      const extraPool = createPool(config.DATABASE_URL!, { applicationName: 'test-extra-api' });
      const extra = await startApi({
        config: extraConfig,
        pool: extraPool,
        temporal,
        logger: testLogger('api-2'),
        port: 0,
        host: '127.0.0.1',
      });
      const handle = {
        baseUrl: extra.url,
        close: async () => {
          await extra.close();
          await extraPool.end();
        },
      };
      extras.push(handle);
      return handle;
    },
    async stop() {
      for (const extra of extras) await extra.close();
      await api.close();
      if (worker) {
        worker.shutdown();
        await workerRun;
      }
      await workerConnection?.close();
      await retries.settle();
      await connection.close();
      await pool.end();
    },
  };
}

/**
 * The SDK's gRPC retries, as by default, with what closing the connection needs: a call refused for
 * a retryable reason (UNAVAILABLE, RESOURCE_EXHAUSTED: a dev server loaded by a large replay) has its
 * next attempt on a timer of up to 6 s, and one that fires after the close throws "Channel has been
 * shut down" from the timer, failing whichever test file the Jest worker runs then (CI, 2026-11-29,
 * after test/e2e/webhook-replay.test.ts). `settle` schedules no retry from then on and waits out those
 * scheduled: nothing when none is.
 */
function settlingRetries() {
  const defaults = defaultGrpcRetryOptions();
  let settling = false;
  let pendingUntil = 0;
  const interceptor = makeGrpcRetryInterceptor({
    retryableDecider: (attempt, status) => !settling && defaults.retryableDecider(attempt, status),
    delayFunction: (attempt, status) => {
      const ms = defaults.delayFunction(attempt, status);
      pendingUntil = Math.max(pendingUntil, Date.now() + ms);
      return ms;
    },
  });
  return {
    interceptor,
    async settle() {
      settling = true;
      const wait = pendingUntil - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait + 500));
    },
  };
}
