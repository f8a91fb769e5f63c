// LOG_LEVEL applies to the worker's own lines (the activities' `projection written`, `predictions
// refreshed`, `webhook delivered`, which reach pino through the Temporal SDK's runtime logger) as it
// does to the API's, in both shapes an operator runs: `npm start` (worker and API in one process, at
// the default level and at debug) and the separate worker process (worker/main.ts: `npm run
// start:worker`, compose's `worker`; at debug). At info nothing below info is written, the SDK
// core's own lines included. Production shape (DATABASE_URL and TEMPORAL_ADDRESS set, on a database
// of this file's own), so only the worker and the API start.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort } from '../../devtools/postgres.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { deliveryReconcileScheduleId, predictionRefreshScheduleId, retentionScheduleId } from '../../worker/schedules.js';
import { bearer, registrationFor, request } from '../api/http.js';
import { randomId, requireTestEnv, startHarness, type Harness } from '../support/harness.js';
import { startEntryPoint, type Started } from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratch-database.js';
import { until } from '../support/until.js';

interface Line {
  level: number;
  msg?: string;
  sdkComponent?: string;
  dispatchId?: string;
  [field: string]: unknown;
}

const DEBUG = 20;
const INFO = 30;

let database: ScratchDatabase;
let h: Harness;
let receiver: Receiver;
let key: string;
const queues: string[] = [];
const started: Started[] = [];

beforeAll(async () => {
  database = await createScratchDatabase('worker_log_level', { migrate: true });
  // Its database helpers, and an API on an idle queue for the separate worker's test (which uses its own).
  h = await startHarness({ worker: false, env: { DATABASE_URL: database.url } });
  receiver = await startReceiver();
  const issuerId = await h.createIssuer('Worker Log Level Issuer');
  key = (await h.createKey(issuerId)).key;
  const endpoint = await createWebhookEndpoint(h.pool, { issuerId, url: receiver.url, events: ['status.updated'] });
  if (!endpoint.ok) throw new Error(endpoint.reason);
}, 120_000);

afterAll(async () => {
  for (const running of started) {
    if (running.child.exitCode === null && running.child.signalCode === null) running.child.kill('SIGINT');
    await running.exited;
  }
  for (const queue of queues) {
    for (const id of [predictionRefreshScheduleId(queue), deliveryReconcileScheduleId(queue), retentionScheduleId(queue)]) {
      await h?.temporal.schedule
        .getHandle(id)
        .delete()
        .catch(() => {});
    }
  }
  await receiver?.close();
  await h?.stop();
  await database?.drop();
});

/** The process's JSON log lines (`npm start` also prints its banner). */
function lines(running: Started): Line[] {
  return running
    .output()
    .split('\n')
    .filter((text) => text.startsWith('{'))
    .map((text) => JSON.parse(text) as Line);
}

function serviceEnv(queue: string, extra: Record<string, string>): Record<string, string> {
  queues.push(queue);
  return {
    DATABASE_URL: database.url,
    TEMPORAL_ADDRESS: requireTestEnv('TEST_TEMPORAL_ADDRESS'),
    TEMPORAL_TASK_QUEUE: queue,
    HOST: '127.0.0.1',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    PREDICTION_REFRESH_INTERVAL: '2s',
    ...extra,
  };
}

async function startNpmStart(extra: Record<string, string>): Promise<{ running: Started; apiUrl: string }> {
  const port = await freePort();
  const running = await startEntryPoint(
    'cli/start.ts',
    serviceEnv(randomId('start-logs'), { PORT: String(port), ...extra }),
    'Press Ctrl-C',
  );
  started.push(running);
  return { running, apiUrl: `http://127.0.0.1:${port}` };
}

/** Registers a dispatch and posts one carrier event through `apiUrl`; the dispatch id. */
async function dispatchWithEvent(apiUrl: string): Promise<string> {
  const id = randomUUID();
  expect((await request(apiUrl, '/v1/dispatches', { method: 'POST', headers: bearer(key), body: registrationFor(id) })).status).toBe(201);
  const event = { status: 'in_transit', occurred_at: new Date().toISOString(), event_id: `scan-${id}` };
  expect((await request(apiUrl, `/v1/dispatches/${id}/events`, { method: 'POST', headers: bearer(key), body: event })).status).toBe(202);
  return id;
}

async function delivered(dispatchId: string): Promise<void> {
  await until(
    async () =>
      (
        await h.pool.query(
          `SELECT 1 FROM webhook_events e JOIN webhook_deliveries d ON d.event_id = e.id WHERE e.dispatch_id = $1 AND d.state = 'delivered'`,
          [dispatchId],
        )
      ).rowCount! >= 1,
    'its webhook delivered',
  );
}

function logged(running: Started, what: (line: Line) => boolean, description: string): Promise<Line> {
  return until(() => lines(running).find(what), description, 30_000).catch((error: Error) => {
    throw new Error(`${error.message}; it wrote:\n${running.output().slice(-4000)}`);
  });
}

describe('npm start (worker and API in one process) at the default LOG_LEVEL (info)', () => {
  let service: { running: Started; apiUrl: string };
  let dispatchId: string;

  beforeAll(async () => {
    service = await startNpmStart({});
    dispatchId = await dispatchWithEvent(service.apiUrl);
  }, 120_000);

  it('writes the worker’s `projection written` line for a carrier event, at info, naming the dispatch', async () => {
    const line = await logged(service.running, (l) => l.msg === 'projection written' && l.status === 'in_transit' && l.dispatchId === dispatchId, 'projection written'); // prettier-ignore
    expect(line.level).toBe(INFO);
  });

  it('writes the prediction refresh’s `predictions refreshed` line', async () => {
    const line = await logged(service.running, (l) => l.msg === 'predictions refreshed', 'predictions refreshed');
    expect(line.level).toBe(INFO);
  });

  it('writes no line below info: no `webhook delivered`, no debug from the SDK or its core', async () => {
    await delivered(dispatchId);
    // What the SDK's log collector still held (it buffers 100 ms) is written by now.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const all = lines(service.running);
    expect(all.filter((l) => l.msg === 'webhook delivered')).toEqual([]);
    expect(all.filter((l) => l.level < INFO)).toEqual([]);
    // The SDK core's (Rust) lines only when something is wrong: not its informational chatter.
    expect(all.filter((l) => l.sdkComponent === 'core' && l.level <= INFO)).toEqual([]);
  });
});

describe('npm start at LOG_LEVEL=debug', () => {
  it('writes the worker’s `webhook delivered` debug line for a delivered webhook', async () => {
    const service = await startNpmStart({ LOG_LEVEL: 'debug' });
    const dispatchId = await dispatchWithEvent(service.apiUrl);
    await delivered(dispatchId);
    const line = await logged(service.running, (l) => l.msg === 'webhook delivered', 'webhook delivered');
    expect(line.level).toBe(DEBUG);
  }, 120_000);
});

describe('the separate worker process (worker/main.ts) at LOG_LEVEL=debug', () => {
  it('writes the `webhook delivered` debug line, and `projection written`', async () => {
    const queue = randomId('worker-logs');
    const worker = await startEntryPoint('worker/main.ts', serviceEnv(queue, { LOG_LEVEL: 'debug' }), 'worker started');
    started.push(worker);
    // An API on the worker's queue: one more of the harness's, in this process (closed with it).
    const api = await h.startExtraApi({ TEMPORAL_TASK_QUEUE: queue });
    const dispatchId = await dispatchWithEvent(api.baseUrl);
    await delivered(dispatchId);
    const line = await logged(worker, (l) => l.msg === 'webhook delivered', 'webhook delivered');
    expect(line.level).toBe(DEBUG);
    await logged(worker, (l) => l.msg === 'projection written' && l.dispatchId === dispatchId, 'projection written');
  }, 120_000);
});
