// The per-endpoint throttle (docs/webhooks.md "Throttle"): an endpoint's rate_limit holds across
// worker processes, against a real local receiver, and waiting for a slot is never an attempt.
// Two product workers run in processes of their own (test/support/worker-process.ts), each polling
// a task queue of its own, and each drives half of the endpoint's deliveries through a redelivery
// workflow, so both processes send to the one endpoint at the same time.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApplicationFailure, type Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createWebhookDeliveryActivities, MAX_THROTTLE_WAIT_MS } from '../../activities/webhook-delivery.js';
import { createTestEvent, createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { claimDelivery } from '../../db/webhooks.js';
import type { StatusRecord } from '../../domain/dispatch-schemas.js';
import { startRedelivery } from '../../temporal/client.js';
import { randomId, requireTestEnv, startHarness, type Harness } from '../support/harness.js';
import { whenReady } from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { until } from '../support/until.js';
import { createWebhookEvents } from '../support/webhook-events.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const WORKER = path.join(ROOT, 'test', 'support', 'worker-process.ts');

let h: Harness;
let receiver: Receiver;
let issuerId: string;
const workers: ChildProcess[] = [];

async function startWorker(name: string, taskQueue: string): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? ROOT,
      DATABASE_URL: h.config.DATABASE_URL!,
      TEMPORAL_ADDRESS: h.config.TEMPORAL_ADDRESS!,
      TEMPORAL_TASK_QUEUE: taskQueue,
      TEST_WORKFLOW_BUNDLE: requireTestEnv('TEST_WORKFLOW_BUNDLE'),
      TEST_WORKER_NAME: name,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WORKER_METRICS_PORT: '0',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  workers.push(child);
  await whenReady(child, 'worker ready', name);
}

async function throttledEndpoint(rateLimit: number) {
  const created = await createWebhookEndpoint(h.pool, {
    issuerId,
    url: receiver.url,
    events: ['status.updated'],
    settings: { rateLimit },
  });
  if (!created.ok) throw new Error(created.reason);
  return created.endpoint.id;
}

beforeAll(async () => {
  h = await startHarness({ worker: false, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  receiver = await startReceiver();
  issuerId = await h.createIssuer('Throttled Issuer');
}, 60_000);

afterAll(async () => {
  for (const worker of workers) {
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.kill('SIGTERM');
    await exited;
  }
  await receiver?.close();
  await h?.stop();
});

describe('rate_limit across worker processes', () => {
  it('sends 10 deliveries fired at once through two worker processes at most 2 a second, every one at attempt 1', async () => {
    const queues = [randomId('throttle-a'), randomId('throttle-b')];
    await Promise.all(queues.map((queue, i) => startWorker(`throttle-worker-${i}`, queue)));
    const endpointId = await throttledEndpoint(2);
    const keys: Array<{ eventId: string; endpointId: string }> = [];
    for (let i = 0; i < 10; i += 1) {
      const key = await createTestEvent(h.pool, issuerId, endpointId, 'status.updated');
      if (!key) throw new Error('no test event');
      keys.push(key);
    }
    // Each process drives five at once (the redelivery workflow's lanes), both at the same time.
    const handles = await Promise.all(queues.map((queue, i) => startRedelivery(h.temporal, queue, keys.slice(i * 5, i * 5 + 5))));
    const results = await Promise.all(handles.map((handle) => handle.result()));
    // Nothing lost and nothing failed: each process delivered its five.
    expect(results).toEqual([
      { delivered: 5, failed: 0, skipped: 0 },
      { delivered: 5, failed: 0, skipped: 0 },
    ]);

    const received = receiver.requests.filter((r) => keys.some((k) => k.eventId === r.headers['x-service-event-id']));
    expect(new Set(received.map((r) => r.headers['x-service-event-id']))).toEqual(new Set(keys.map((k) => k.eventId)));
    expect(received).toHaveLength(10);
    expect(received.map((r) => r.headers['x-service-delivery-attempt'])).toEqual(Array(10).fill('1'));

    // The slots are 500 ms apart by the database's clock; the receiver sees them with the jitter of
    // two busy processes (on a loaded CI machine two arrivals came 286 ms apart), so the check is
    // the throttle's promise (docs/webhooks.md "Throttle"): no one-second window holds more than the limit + 1, i.e. any four consecutive
    // arrivals span a second or more; and the ten together took the nine slot intervals they need.
    const times = received.map((r) => r.receivedAt).sort((a, b) => a - b);
    const spansOfFour = times.slice(3).map((t, i) => t - times[i]);
    expect(Math.min(...spansOfFour)).toBeGreaterThanOrEqual(1000);
    const JITTER_MS = 250; // at each end of the whole run
    expect(times[times.length - 1] - times[0]).toBeGreaterThanOrEqual(9 * 500 - 2 * JITTER_MS);

    // Waiting was not an attempt: one logged attempt per delivery, numbered 1.
    const { rows } = await h.pool.query<{ attempt: number; n: number; attempts: number; state: string }>(
      `SELECT d.attempts, d.state, min(a.attempt) AS attempt, count(a.*)::int AS n
         FROM webhook_deliveries d LEFT JOIN delivery_attempts a USING (event_id, endpoint_id)
        WHERE d.endpoint_id = $1 GROUP BY d.event_id, d.endpoint_id`,
      [endpointId],
    );
    expect(rows).toHaveLength(10);
    for (const row of rows) expect(row).toEqual({ attempts: 1, state: 'delivered', attempt: 1, n: 1 });
  }, 120_000);
});

const quiet: Logger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

describe('a slot further than the longest wait', () => {
  it('ends the run with a retryable WebhookThrottled failure that records no attempt and sends nothing, then attempt 1 goes out', async () => {
    const endpointId = await throttledEndpoint(1);
    const key = await createTestEvent(h.pool, issuerId, endpointId, 'status.updated');
    if (!key) throw new Error('no test event');
    // Another process has claimed slots up to 60 s from now.
    await h.pool.query(`INSERT INTO webhook_endpoint_send_slots (endpoint_id, next_at) VALUES ($1, now() + interval '60 seconds')`, [
      endpointId,
    ]);
    const activities = createWebhookDeliveryActivities({ pool: h.pool, config: h.config });
    const before = receiver.requests.length;
    const run = (attempt: number) =>
      new MockActivityEnvironment({ attempt }, { logger: quiet })
        .run(activities.deliverWebhook, key)
        .catch((failure: unknown) => failure as ApplicationFailure);

    const throttled = await run(1);
    expect(throttled).toBeInstanceOf(ApplicationFailure);
    const failure = throttled as ApplicationFailure;
    expect(failure.type).toBe('WebhookThrottled');
    expect(failure.nonRetryable).toBe(false);
    // It comes back about when the backlog ahead of it is within the longest wait.
    expect(Number(failure.nextRetryDelay)).toBeGreaterThanOrEqual(60_000 - MAX_THROTTLE_WAIT_MS - 2000);
    expect(Number(failure.nextRetryDelay)).toBeLessThanOrEqual(60_000);
    expect(receiver.requests.length).toBe(before);
    const logged = await h.pool.query('SELECT 1 FROM delivery_attempts WHERE event_id = $1', [key.eventId]);
    expect(logged.rowCount).toBe(0);
    const { rows } = await h.pool.query(
      `SELECT attempts, state, driver_due_at > now() + interval '2 minutes' AS deferred FROM webhook_deliveries WHERE event_id = $1`,
      [key.eventId],
    );
    // The reconciler will not take it for an orphan while it waits.
    expect(rows[0]).toEqual({ attempts: 0, state: 'pending', deferred: true });

    // Its slot comes: Temporal's next run (its counter at 2) sends the delivery's attempt 1.
    await h.pool.query('UPDATE webhook_endpoint_send_slots SET next_at = now() WHERE endpoint_id = $1', [endpointId]);
    expect(await run(2)).toEqual({ outcome: 'delivered', attempts: 1 });
    const sent = receiver.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0].headers['x-service-delivery-attempt']).toBe('1');
  }, 60_000);
});

describe('a replay that takes the delivery over while its run waits for its slot', () => {
  it('is left to send that attempt: the waiting run sends nothing, logs nothing and ends superseded', async () => {
    const endpointId = await throttledEndpoint(1);
    const key = await createTestEvent(h.pool, issuerId, endpointId, 'status.updated');
    if (!key) throw new Error('no test event');
    // Another process has claimed slots up to 2 s from now: the run waits for its slot.
    await h.pool.query(`INSERT INTO webhook_endpoint_send_slots (endpoint_id, next_at) VALUES ($1, now() + interval '2 seconds')`, [
      endpointId,
    ]);
    const activities = createWebhookDeliveryActivities({ pool: h.pool, config: h.config });
    const before = receiver.requests.length;
    const waiting = new MockActivityEnvironment({ attempt: 1 }, { logger: quiet }).run(activities.deliverWebhook, key);
    const driverOf = async () =>
      (await h.pool.query('SELECT driver FROM webhook_deliveries WHERE event_id = $1', [key.eventId])).rows[0].driver;
    await until(async () => (await driverOf()) !== null, 'the run to claim the delivery');
    expect(await claimDelivery(h.pool, key.eventId, endpointId, { driver: 'replay-test', takeOver: true, lastAttempt: 6 })).toMatchObject({ attempts: 0 }); // prettier-ignore

    expect(await waiting).toEqual({ outcome: 'superseded', attempts: 0 });
    expect(receiver.requests.length).toBe(before);
    const logged = await h.pool.query('SELECT 1 FROM delivery_attempts WHERE event_id = $1', [key.eventId]);
    expect(logged.rowCount).toBe(0);
    expect(await driverOf()).toBe('replay-test');
  }, 30_000);
});

describe('an erasure requested while a run waits for its slot', () => {
  it('keeps the body from being sent: the run sends and logs nothing and ends skipped', async () => {
    const endpointId = await throttledEndpoint(1);
    const dispatchId = randomUUID();
    const data = { id: dispatchId, status: 'in_transit' } as unknown as StatusRecord;
    const pairs = await createWebhookEvents(h.pool, { dispatchId, issuerId, mode: 'live', events: [{ type: 'status.updated', timestamp: new Date().toISOString(), data }] }); // prettier-ignore
    // The issuer's other endpoints (the tests above) get a delivery too: this endpoint's is the one driven.
    const key = pairs.find((pair) => pair.endpointId === endpointId)!;
    await h.pool.query(`INSERT INTO webhook_endpoint_send_slots (endpoint_id, next_at) VALUES ($1, now() + interval '2 seconds')`, [
      endpointId,
    ]);
    const activities = createWebhookDeliveryActivities({ pool: h.pool, config: h.config });
    const before = receiver.requests.length;
    const waiting = new MockActivityEnvironment({ attempt: 1 }, { logger: quiet }).run(activities.deliverWebhook, key);
    const driverOf = async () =>
      (await h.pool.query('SELECT driver FROM webhook_deliveries WHERE event_id = $1 AND endpoint_id = $2', [key.eventId, endpointId]))
        .rows[0].driver;
    await until(async () => (await driverOf()) !== null, 'the run to claim the delivery');
    await h.pool.query(`INSERT INTO erasures (id, dispatch_id, issuer_id, mode) VALUES ($1, $2, $3, 'live')`, [
      randomId('era'),
      dispatchId,
      issuerId,
    ]);

    expect(await waiting).toEqual({ outcome: 'skipped', attempts: 0 });
    expect(receiver.requests.length).toBe(before);
    const logged = await h.pool.query('SELECT 1 FROM delivery_attempts WHERE event_id = $1', [key.eventId]);
    expect(logged.rowCount).toBe(0);
  }, 30_000);
});
