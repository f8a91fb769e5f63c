// At-least-once through a crash of the Temporal server itself (docs/webhooks.md "Crash guarantees": "a crash of any process at
// any point loses no event"). The dev server persists to a SQLite file, as `npm start` runs it; a
// webhook's first attempt fails, so its retry waits in Temporal; the server is killed with SIGKILL
// and started again on the same file and port. The retry must still come, with the same event id
// and body, numbered as the second attempt, and the worker (the same process) must carry on.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { verify } from '../../consumer-kit/src/index.js';
import type { Pool } from '../../db/pool.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { loadConfig } from '../../platform/config.js';
import { startDevServer, type RunningDevServer } from '../../devtools/temporal-dev-server.js';
import { createWorker } from '../../worker/create-worker.js';
import { installTemporalRuntime } from '../../worker/runtime.js';
import { randomId, requireTestEnv, testLogger } from '../support/env.js';
import { restartablePort } from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { statusUpdatedDeliveries, untilDelivered } from '../support/deliveries.js';
import { until } from '../support/until.js';
import { insertIssuer, registerDispatch, registration, signalCarrierEvent, testPool } from '../support/workflow-env.js';

const dir = mkdtempSync(path.join(tmpdir(), 'temporal-restart-'));
const dbFilename = path.join(dir, 'temporal.sqlite');
let port: number;
let server: RunningDevServer;
let pool: Pool;
let receiver: Receiver;
let secret: string;
let issuerId: string;
let worker: Worker;
let running: Promise<void>;
let nativeConnection: NativeConnection;
const taskQueue = randomId('restart');

const startServer = () => startDevServer({ cliPath: requireTestEnv('TEST_TEMPORAL_CLI'), port, dbFilename });

beforeAll(async () => {
  port = await restartablePort(); // the dev server comes back on it
  server = await startServer();
  pool = testPool();
  issuerId = await insertIssuer(pool);
  receiver = await startReceiver();
  const created = await createWebhookEndpoint(pool, { issuerId, url: receiver.url, events: ['status.updated'] });
  if (!created.ok) throw new Error(created.reason);
  secret = created.secret;
  installTemporalRuntime(testLogger('temporal'), 'ERROR');
  nativeConnection = await NativeConnection.connect({ address: server.address });
  worker = await createWorker({
    connection: nativeConnection,
    namespace: 'default',
    taskQueue,
    pool,
    // A short first retry, so that the test waits seconds rather than the production minute.
    config: loadConfig({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_SCHEDULE: '3s,5m,30m,2h,8h' }),
    workflowBundle: { codePath: requireTestEnv('TEST_WORKFLOW_BUNDLE') },
  });
  running = worker.run();
}, 90_000);

afterAll(async () => {
  worker?.shutdown();
  await running;
  await nativeConnection?.close();
  await server?.stop();
  await receiver?.close();
  await pool?.end();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe('the Temporal server killed while a webhook retry waits in it', () => {
  it('sends the retry after the server is started again on its file, with the same event id and body, as attempt 2', async () => {
    const connection = await Connection.connect({ address: server.address });
    const client = new Client({ connection });
    const reg = registration(issuerId);
    await registerDispatch(client, taskQueue, reg);
    receiver.respond = () => 500;
    await signalCarrierEvent(client, reg.id, { status: 'in_transit', occurred_at: '2026-11-21T09:00:00Z', event_id: 'restart-1' });
    await connection.close();

    const attemptOf = () => statusUpdatedDeliveries(pool, issuerId, reg.id);
    // The failed first attempt is recorded; its retry now waits in Temporal.
    await until(async () => ((await attemptOf())[0]?.attempts === 1 ? true : undefined), 'the first attempt to be recorded');
    expect(await attemptOf()).toEqual([{ state: 'pending', attempts: 1 }]);

    const killed = new Promise((resolve) => server.child.once('exit', resolve));
    server.child.kill('SIGKILL');
    await killed;
    receiver.respond = () => 200;
    server = await startServer();

    const [first, second] = await until(() => (receiver.requests.length >= 2 ? receiver.requests : undefined), 'the retry');
    expect(second.headers['x-service-event-id']).toBe(first.headers['x-service-event-id']);
    expect(second.body.equals(first.body)).toBe(true);
    expect([first.headers['x-service-delivery-attempt'], second.headers['x-service-delivery-attempt']]).toEqual(['1', '2']);
    expect(verify(second.body, second.headers['x-service-signature'] as string, secret)).toBe(true);
    expect(await untilDelivered(pool, issuerId, reg.id)).toEqual([{ state: 'delivered', attempts: 2 }]);
  }, 120_000);
});
