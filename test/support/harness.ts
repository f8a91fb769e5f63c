// A running service for integration tests: a real worker (on its own task queue) and a real API
// process (on a free port) against the Temporal dev server and Postgres that global-setup started.
// Also creates issuers and keys straight in the database, as the admin CLI would.
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { startApi } from '../../api/server.js';
import { createPool, type Pool } from '../../db/pool.js';
import { generateKey, SCOPES, type KeyMode, type Scope } from '../../domain/api-keys.js';
import { loadConfig, type Config } from '../../platform/config.js';
import { createLogger } from '../../platform/logger.js';
import { createWorker } from '../../worker/create-worker.js';
import { installTemporalRuntime } from '../../worker/runtime.js';

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

export function testLogger(name: string) {
  return createLogger({ name, level: process.env.TEST_LOG_LEVEL ?? 'silent', destination: 2 });
}

export function requireTestEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests with \`npm test\` (jest global-setup starts the infrastructure)`);
  return value;
}

export function randomId(prefix: string): string {
  return `${prefix}_${randomBytes(8).toString('hex')}`;
}

export async function startHarness(options: { env?: Record<string, string>; worker?: boolean } = {}): Promise<Harness> {
  const taskQueue = randomId('test');
  const baseEnv = {
    ...process.env,
    DATABASE_URL: requireTestEnv('TEST_DATABASE_URL'),
    TEMPORAL_ADDRESS: requireTestEnv('TEST_TEMPORAL_ADDRESS'),
    TEMPORAL_TASK_QUEUE: taskQueue,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...options.env,
  };
  const config = loadConfig(baseEnv);
  const logger = testLogger('harness');
  installTemporalRuntime(logger, 'WARN');
  const pool = createPool(config.DATABASE_URL!, { applicationName: 'test-harness' });
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS! });
  const temporal = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });

  let worker: Worker | undefined;
  let workerRun: Promise<void> | undefined;
  let workerConnection: NativeConnection | undefined;
  if (options.worker !== false) {
    workerConnection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS! });
    worker = await createWorker({
      connection: workerConnection,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue,
      pool,
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
      const id = randomId('iss');
      await pool.query('INSERT INTO issuers (id, name) VALUES ($1, $2)', [id, name]);
      return id;
    },
    async createKey(issuerId, keyOptions = {}) {
      const mode = keyOptions.mode ?? 'live';
      const generated = generateKey(mode);
      const id = randomId('key');
      await pool.query(
        'INSERT INTO api_keys (id, issuer_id, lookup, key_hash, scopes, mode) VALUES ($1, $2, $3, $4, $5, $6)',
        [id, issuerId, generated.lookup, generated.hash, keyOptions.scopes ?? [...SCOPES], mode],
      );
      return { id, key: generated.key };
    },
    async revokeKey(keyId) {
      await pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [keyId]);
    },
    async startExtraApi(env = {}) {
      const extraConfig = loadConfig({ ...baseEnv, ...env });
      const extraPool = createPool(config.DATABASE_URL!, { applicationName: 'test-extra-api' });
      const extra = await startApi({ config: extraConfig, pool: extraPool, temporal, logger: testLogger('api-2'), port: 0, host: '127.0.0.1' });
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
      await connection.close();
      await pool.end();
    },
  };
}
