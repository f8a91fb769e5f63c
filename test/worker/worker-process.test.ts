// The real worker process (`tsx worker/main.ts`) and its metrics server (WORKER_METRICS_PORT,
// worker/metrics-server.ts): /healthz, /readyz once it polls, /metrics with our series and the
// Temporal SDK's own, each moved by real work (webhooks to a local receiver, carrier events, the
// prediction refresh Schedule), and draining on SIGTERM. The worker and the harness's API share a
// database of their own, so every delivery in it is this file's: the counters can be compared
// with the rows.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { setCarrierCondition } from '../../db/conditions.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { deliveryReconcileScheduleId, predictionRefreshScheduleId } from '../../worker/schedules.js';
import { bearer, registrationFor, request } from '../api/http.js';
import { randomId, requireTestEnv, startHarness, type Harness } from '../support/harness.js';
import { startEntryPoint, type Started } from '../support/processes.js';
import { scrape, valueOf, type Exposition } from '../support/prometheus.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratch-database.js';
import { until } from '../support/until.js';
import { registerDispatch, registration, seedTransitHistory } from '../support/workflow-env.js';

const taskQueue = randomId('worker-process');
let database: ScratchDatabase;
let h: Harness;
let worker: Started;
let workerUrl: string;
let receiver: Receiver;
let failing: Receiver;
let key: string;
let issuerId: string;
let failingKey: string;

beforeAll(async () => {
  database = await createScratchDatabase('worker_process', { migrate: true });
  // The harness's API registers on this file's queue, where only the worker process polls (the
  // harness's own worker polls another, idle queue).
  h = await startHarness({ env: { DATABASE_URL: database.url, TEMPORAL_TASK_QUEUE: taskQueue } });
  receiver = await startReceiver();
  failing = await startReceiver({ respond: () => 500 });
  issuerId = await h.createIssuer('Worker Metrics Issuer');
  key = (await h.createKey(issuerId)).key;
  const created = await createWebhookEndpoint(h.pool, { issuerId, url: receiver.url, events: ['status.updated'] });
  if (!created.ok) throw new Error(created.reason);
  const failingIssuer = await h.createIssuer('Failing Endpoint Issuer');
  failingKey = (await h.createKey(failingIssuer)).key;
  const failingEndpoint = await createWebhookEndpoint(h.pool, { issuerId: failingIssuer, url: failing.url, events: ['status.updated'] });
  if (!failingEndpoint.ok) throw new Error(failingEndpoint.reason);

  worker = await startEntryPoint(
    'worker/main.ts',
    {
      DATABASE_URL: database.url,
      TEMPORAL_ADDRESS: requireTestEnv('TEST_TEMPORAL_ADDRESS'),
      TEMPORAL_TASK_QUEUE: taskQueue,
      HOST: '127.0.0.1',
      WORKER_METRICS_PORT: '0',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1s',
      PREDICTION_REFRESH_INTERVAL: '2s',
      LOG_LEVEL: 'info',
      // As the chart's worker.nodeOptions and docker-compose set it.
      NODE_OPTIONS: '--max-old-space-size=320',
    },
    'worker started',
  );
  const line = worker
    .output()
    .split('\n')
    .find((text) => text.includes('worker metrics listening'))!;
  workerUrl = JSON.parse(line).url;
}, 180_000);

afterAll(async () => {
  if (worker && worker.child.exitCode === null && worker.child.signalCode === null) {
    worker.child.kill('SIGKILL');
    await worker.exited;
  }
  for (const id of [predictionRefreshScheduleId(taskQueue), deliveryReconcileScheduleId(taskQueue)]) {
    await h?.temporal.schedule
      .getHandle(id)
      .delete()
      .catch(() => {});
  }
  await receiver?.close();
  await failing?.close();
  await h?.stop();
  await database?.drop();
});

const metrics = () => scrape(`${workerUrl}/metrics`);
const get = (path: string) => fetch(`${workerUrl}${path}`);

async function register(apiKey: string): Promise<string> {
  const id = randomUUID();
  const registered = await request(h.baseUrl, '/v1/dispatches', { method: 'POST', headers: bearer(apiKey), body: registrationFor(id) });
  expect(registered.status).toBe(201);
  return id;
}

async function postEvent(apiKey: string, id: string, status: string): Promise<void> {
  const body = { status, occurred_at: new Date().toISOString() };
  expect((await request(h.baseUrl, `/v1/dispatches/${id}/events`, { method: 'POST', headers: bearer(apiKey), body })).status).toBe(202);
}

async function rowCount(sql: string): Promise<number> {
  return Number((await h.pool.query<{ n: number }>(sql)).rows[0].n);
}

/** Scrapes until `ready` holds of the exposition; returns that exposition. */
function scrapeUntil(ready: (m: Exposition) => boolean, what: string): Promise<Exposition> {
  return until(async () => {
    const m = await metrics();
    return ready(m) ? m : undefined;
  }, what);
}

describe('the worker process metrics server', () => {
  it('answers /healthz 200, and /readyz 200 once the worker polls its task queue', async () => {
    expect((await get('/healthz')).status).toBe(200);
    await until(async () => (await get('/readyz')).status === 200, '/readyz to answer 200');
    expect(await (await get('/readyz')).json()).toEqual({ status: 'ready' });
  });

  it('logs at start its workflow cache and the V8 heap limit that NODE_OPTIONS gave it', () => {
    const started = worker
      .output()
      .split('\n')
      .filter((text) => text.startsWith('{'))
      .map((text) => JSON.parse(text) as { msg?: string; heap_limit_mib?: number; max_cached_workflows?: number })
      .find((line) => line.msg === 'worker started');
    expect(started?.max_cached_workflows).toBe(1000);
    // The old-space cap plus V8's young generation (192 MiB on Node 24), not the host-sized default (GiBs).
    expect(started?.heap_limit_mib).toBeGreaterThanOrEqual(320);
    expect(started?.heap_limit_mib).toBeLessThan(320 + 256);
  });

  it("serves the Temporal SDK's own temporal_ worker metrics with ours, no family declared twice", async () => {
    const m = await scrapeUntil((e) => e.samples.some((s) => s.name.startsWith('temporal_')), 'temporal_ metrics');
    expect(m.samples.some((s) => s.name === 'temporal_num_pollers' || s.name.startsWith('temporal_worker_'))).toBe(true);
    expect(m.types.some(([name]) => name === 'cds_webhook_attempts_total')).toBe(true);
    const names = m.types.map(([name]) => name);
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
  });

  it('counts a webhook delivered to a local receiver as a successful attempt with its latency, and the carrier event as applied', async () => {
    const id = await register(key);
    await until(
      async () => (await rowCount("SELECT count(*) AS n FROM webhook_deliveries WHERE state = 'pending'")) === 0,
      'no pending delivery',
    );
    const before = await metrics();
    await postEvent(key, id, 'in_transit');
    await until(
      async () => (await rowCount(`SELECT count(*) AS n FROM webhook_events e JOIN webhook_deliveries d ON d.event_id = e.id WHERE e.dispatch_id = '${id}' AND d.state = 'delivered'`)) > 0, // prettier-ignore
      'the in_transit webhook to be delivered',
    );
    const delivered = await rowCount('SELECT count(*) AS n FROM delivery_attempts WHERE status_code BETWEEN 200 AND 299');
    const after = await scrapeUntil(
      (m) => valueOf(m, 'cds_webhook_attempts_total', { outcome: 'success' }) === delivered,
      'the attempt counted',
    );
    expect(valueOf(after, 'cds_webhook_attempts_total', { outcome: 'success' })).toBe(valueOf(before, 'cds_webhook_attempts_total', { outcome: 'success' }) + 1); // prettier-ignore
    expect(valueOf(after, 'cds_webhook_attempt_duration_seconds_count', { outcome: 'success' })).toBe(delivered);
    expect(valueOf(after, 'cds_carrier_events_total', { effect: 'applied' })).toBe(valueOf(before, 'cds_carrier_events_total', { effect: 'applied' }) + 1); // prettier-ignore
  });

  it('counts attempts an endpoint answers 500 as http_error, and the delivery that exhausts its retries as undeliverable', async () => {
    const before = await metrics();
    const id = await register(failingKey);
    await postEvent(failingKey, id, 'in_transit');
    // WEBHOOK_RETRY_SCHEDULE=1s: the first attempt and one retry, then undeliverable.
    const after = await scrapeUntil(
      (m) => valueOf(m, 'cds_webhook_undeliverable_total') >= valueOf(before, 'cds_webhook_undeliverable_total') + 1,
      'the delivery to become undeliverable',
    );
    const undeliverable = await rowCount("SELECT count(*) AS n FROM webhook_deliveries WHERE state = 'undeliverable'");
    const failedAttempts = await rowCount('SELECT count(*) AS n FROM delivery_attempts WHERE status_code = 500');
    expect(undeliverable).toBeGreaterThan(0);
    expect(valueOf(after, 'cds_webhook_undeliverable_total')).toBe(undeliverable);
    expect(valueOf(after, 'cds_webhook_attempts_total', { outcome: 'http_error' })).toBe(failedAttempts);
    expect(valueOf(after, 'cds_webhook_attempt_duration_seconds_count', { outcome: 'http_error' })).toBe(failedAttempts);
  });

  it('reads pending deliveries by age on scrape: one held open is pending under a minute, then none once it is answered', async () => {
    let release!: () => void;
    const held = new Promise<number>((resolve) => (release = () => resolve(200)));
    receiver.respond = () => held;
    try {
      const id = await register(key);
      await postEvent(key, id, 'in_transit');
      // Ours is pending while the receiver holds its answer. Each scrape counts the rows at its own
      // moment and other tests' deliveries settle on their own time (a retry turning undeliverable),
      // so a scrape is compared with a count taken right after it until the two agree, with ours in both.
      const ours = `SELECT count(*) AS n FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
                     WHERE e.dispatch_id = '${id}' AND d.state = 'pending'`;
      await until(async () => (await rowCount(ours)) === 1, 'our delivery pending');
      const agreed = await until(async () => {
        const m = await metrics();
        const pending = await rowCount("SELECT count(*) AS n FROM webhook_deliveries WHERE state = 'pending'");
        return valueOf(m, 'cds_webhook_deliveries_pending', { age: 'under_1m' }) === pending && (await rowCount(ours)) === 1
          ? m
          : undefined;
      }, 'the under_1m gauge to equal the pending rows, ours among them');
      expect(valueOf(agreed, 'cds_webhook_deliveries_pending', { age: 'under_1m' })).toBeGreaterThanOrEqual(1);
      for (const age of ['1m_to_1h', '1h_to_1d', 'over_1d']) expect(valueOf(agreed, 'cds_webhook_deliveries_pending', { age })).toBe(0);
    } finally {
      release();
      receiver.respond = () => 200;
    }
    await scrapeUntil((e) => valueOf(e, 'cds_webhook_deliveries_pending', { age: 'under_1m' }) === 0, 'no pending delivery');
  });

  it('times each prediction refresh run and counts the dispatches it signalled', async () => {
    await seedTransitHistory(h.pool, 'SI', ['1000']);
    const reg = registration(issuerId, {
      dispatchDate: new Date().toISOString(),
      destination: { postal_code: '1000', country_code: 'SI' },
    });
    await registerDispatch(h.temporal, taskQueue, reg);
    const before = await metrics();
    await setCarrierCondition(h.pool, { countryCode: 'SI', postalPrefix: null, delayDays: 3, until: null });
    const after = await scrapeUntil(
      (m) =>
        valueOf(m, 'cds_prediction_refresh_dispatches_signalled_total') >
        valueOf(before, 'cds_prediction_refresh_dispatches_signalled_total'),
      'the refresh to signal the dispatch',
    );
    expect(valueOf(after, 'cds_prediction_refresh_duration_seconds_count')).toBeGreaterThan(0);
  });

  it('drains on SIGTERM: /readyz turns 503 at once, the running webhook attempt finishes and is recorded, and the process exits 0', async () => {
    let release!: () => void;
    const held = new Promise<number>((resolve) => (release = () => resolve(200)));
    receiver.respond = () => held;
    const id = await register(key);
    const arrived = receiver.requests.length;
    await postEvent(key, id, 'in_transit');
    await until(() => receiver.requests.length > arrived, 'the attempt to reach the receiver');

    worker.child.kill('SIGTERM');
    await until(async () => (await get('/readyz')).status === 503, '/readyz to answer 503', 5_000);
    expect(worker.child.exitCode).toBeNull(); // still running: its activity is in flight
    release();
    expect(await worker.exited).toBe(0);
    const states = await h.pool.query(
      'SELECT d.state FROM webhook_events e JOIN webhook_deliveries d ON d.event_id = e.id WHERE e.dispatch_id = $1',
      [id],
    );
    expect(states.rows.map((row) => row.state)).toContain('delivered');
    expect(worker.output()).toContain('draining: polling stopped');
  }, 60_000);
});
