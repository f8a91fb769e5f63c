// Webhook events of the dispatch workflow on the time-skipping test server, delivered by the real
// delivery activity to a real local HTTP receiver: which events fire, and the retry schedule (docs/webhooks.md "Delivery and retry schedule")
// (1 min, 5 min, 30 min, 2 h, 8 h, then undeliverable) measured on the server's own clock.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { replayDeliveries } from '../../ingest/webhook-replays.js';
import type { Pool } from '../../db/pool.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import type { CarrierEventBody } from '../../domain/carrier-event-schemas.js';
import type { WebhookEventType } from '../../domain/vocabulary.js';
import { type DispatchRegistration, type DispatchWorkflowInput } from '../../temporal/contract.js';
import { maybeRecordHistory } from '../support/histories.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { until } from '../support/until.js';
import {
  registerDispatch,
  signalCarrierEvent,
  insertIssuer,
  registration,
  startTimeSkippingTestbed,
  type TimeSkippingTestbed,
} from '../support/workflow-env.js';

let testbed: TimeSkippingTestbed;
let env: TestWorkflowEnvironment;
let pool: Pool;
let taskQueue: string;
let receiver: Receiver | undefined;

beforeAll(async () => {
  testbed = await startTimeSkippingTestbed();
  ({ env, pool, taskQueue } = testbed);
});

afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

afterAll(async () => {
  await testbed?.stop();
});

/** An issuer with one endpoint on a fresh receiver that records the test server's clock per request. */
async function issuerWithEndpoint(events: WebhookEventType[], respond: Receiver['respond']) {
  receiver = await startReceiver({ respond, note: () => env.currentTimeMs() });
  const issuerId = await insertIssuer(pool);
  const created = await createWebhookEndpoint(pool, { issuerId, url: receiver.url, events });
  if (!created.ok) throw new Error(created.reason);
  return { issuerId, endpointId: created.endpoint.id };
}

const register = (reg: DispatchRegistration, options: DispatchWorkflowInput['options'] = {}) =>
  registerDispatch(env.client, taskQueue, reg, options);
const signal = (id: string, event: CarrierEventBody) => signalCarrierEvent(env.client, id, event);

/** Delivers the card and lets the workflow run to its end (time skipping runs while we await it). */
async function deliverAndFinish(id: string) {
  await signal(id, { status: 'delivered', occurred_at: '2026-11-21T10:00:00Z', event_id: 'done' });
  return env.client.workflow.getHandle(id).result();
}

const eventsOf = (r: Receiver) => r.requests.map((req) => JSON.parse(req.body.toString('utf8')).event as string);

describe('webhook events fired by the dispatch workflow', () => {
  it('sends delivery.predicted at registration and status.updated + delivery.completed on delivery, each to subscribers only', async () => {
    const { issuerId } = await issuerWithEndpoint(['delivery.predicted', 'status.updated', 'delivery.completed'], () => 200);
    const reg = registration(issuerId);
    await register(reg, { deliveredRetentionMs: 60_000 });
    await deliverAndFinish(reg.id);
    const received = eventsOf(receiver!);
    expect(received.filter((e) => e === 'delivery.predicted').length).toBeGreaterThanOrEqual(1);
    expect(received).toContain('status.updated');
    expect(received).toContain('delivery.completed');
    const completed = receiver!.requests.find((r) => JSON.parse(r.body.toString()).event === 'delivery.completed')!;
    const envelope = JSON.parse(completed.body.toString());
    expect(envelope.data).toMatchObject({ id: reg.id, status: 'delivered', ui_suggestion: { recommended_action: 'Activate' } });
    expect(Object.keys(envelope)).toEqual(['event', 'timestamp', 'data']);
  });

  it('sends nothing for event types the endpoint did not subscribe to', async () => {
    const { issuerId } = await issuerWithEndpoint(['delivery.exception'], () => 200);
    const reg = registration(issuerId);
    await register(reg, { deliveredRetentionMs: 60_000 });
    await signal(reg.id, { status: 'exception', occurred_at: '2026-11-21T08:00:00Z', reason: 'postal_delay', event_id: 'x1' });
    await signal(reg.id, { status: 'exception', occurred_at: '2026-11-21T09:00:00Z', reason: 'failed_attempt', event_id: 'x2' });
    await deliverAndFinish(reg.id);
    // A repeated exception fires delivery.exception again; nothing else was subscribed.
    expect(eventsOf(receiver!)).toEqual(['delivery.exception', 'delivery.exception']);
  });
});

describe('retry schedule', () => {
  it('makes exactly 6 attempts at +1 min, +5 min, +30 min, +2 h, +8 h, then marks the event undeliverable', async () => {
    const { issuerId, endpointId } = await issuerWithEndpoint(['delivery.completed'], () => 500);
    const reg = registration(issuerId);
    await register(reg, { deliveredRetentionMs: 60_000 });
    await deliverAndFinish(reg.id);

    const requests = receiver!.requests;
    expect(requests).toHaveLength(6);
    expect(requests.map((r) => r.headers['x-service-delivery-attempt'])).toEqual(['1', '2', '3', '4', '5', '6']);
    expect(new Set(requests.map((r) => r.headers['x-service-event-id'])).size).toBe(1);
    expect(new Set(requests.map((r) => r.body.toString('base64'))).size).toBe(1);
    const clock = requests.map((r) => Number(r.note));
    const gapsSeconds = clock.slice(1).map((t, i) => Math.round((t - clock[i]) / 1000));
    const expected = [60, 300, 1800, 7200, 28800];
    gapsSeconds.forEach((gap, i) => expect(Math.abs(gap - expected[i])).toBeLessThanOrEqual(5));

    const { rows } = await pool.query(
      `SELECT d.state, d.attempts, (SELECT count(*)::int FROM delivery_attempts a WHERE a.event_id = d.event_id AND a.endpoint_id = d.endpoint_id) AS recorded
         FROM webhook_deliveries d WHERE d.endpoint_id = $1`,
      [endpointId],
    );
    expect(rows).toEqual([{ state: 'undeliverable', attempts: 6, recorded: 6 }]);
    await maybeRecordHistory(env.client.workflow.getHandle(reg.id), 'webhook-undeliverable-after-six-attempts');
  });

  it('stops retrying once an attempt succeeds (success at attempt 3)', async () => {
    const { issuerId, endpointId } = await issuerWithEndpoint(['delivery.completed'], (n) => (n < 3 ? 503 : 200));
    const reg = registration(issuerId);
    await register(reg, { deliveredRetentionMs: 60_000 });
    await deliverAndFinish(reg.id);
    expect(receiver!.requests.map((r) => r.headers['x-service-delivery-attempt'])).toEqual(['1', '2', '3']);
    const { rows } = await pool.query('SELECT state, attempts FROM webhook_deliveries WHERE endpoint_id = $1', [endpointId]);
    expect(rows).toEqual([{ state: 'delivered', attempts: 3 }]);
    await maybeRecordHistory(env.client.workflow.getHandle(reg.id), 'webhook-delivered-at-third-attempt');
  });
});

describe('replay of an event whose retry is waiting (docs/webhooks.md)', () => {
  it('replaces the waiting retry: the next attempt goes out now, numbers strictly increase, six at most; a settled event then starts a new cycle at 1', async () => {
    let failing = true;
    const { issuerId, endpointId } = await issuerWithEndpoint(['delivery.completed'], () => (failing ? 500 : 200));
    const reg = registration(issuerId);
    await register(reg, { deliveredRetentionMs: 60_000 });
    await signal(reg.id, { status: 'delivered', occurred_at: '2026-11-21T10:00:00Z', event_id: 'done' });
    await until(() => receiver!.requests.length >= 1, 'attempt 1');
    await env.sleep('70 seconds');
    await until(() => receiver!.requests.length >= 2, 'attempt 2');
    const eventId = String(receiver!.requests[0].headers['x-service-event-id']);
    // Attempt 3 of the dispatch's own activity is now waiting 5 minutes: replay the event.
    const replay = await replayDeliveries({ pool, temporal: env.client, taskQueue }, { eventId });
    expect(replay?.total).toBe(1);
    await replay!.handle.result();
    await env.client.workflow.getHandle(reg.id).result();

    const requests = receiver!.requests;
    expect(requests.map((r) => r.headers['x-service-delivery-attempt'])).toEqual(['1', '2', '3', '4', '5', '6']);
    const clock = requests.map((r) => Number(r.note));
    // The replayed attempt went out before the 5-minute retry it replaced was due, and the schedule went on from it.
    expect(clock[2] - clock[1]).toBeLessThan(300_000);
    const gaps = clock.slice(3).map((t, i) => Math.round((t - clock[i + 2]) / 1000));
    [1800, 7200, 28800].forEach((expected, i) => expect(Math.abs(gaps[i] - expected)).toBeLessThanOrEqual(5));
    const attempts = await pool.query('SELECT attempt FROM delivery_attempts WHERE endpoint_id = $1 ORDER BY id', [endpointId]);
    expect(attempts.rows.map((r) => r.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    const settled = await pool.query('SELECT state, attempts FROM webhook_deliveries WHERE endpoint_id = $1', [endpointId]);
    expect(settled.rows).toEqual([{ state: 'undeliverable', attempts: 6 }]);

    // Undeliverable is settled: a replay starts a new cycle at attempt 1.
    failing = false;
    const again = await replayDeliveries({ pool, temporal: env.client, taskQueue }, { eventId });
    await again!.handle.result();
    expect(receiver!.requests.slice(6).map((r) => r.headers['x-service-delivery-attempt'])).toEqual(['1']);
    const delivered = await pool.query('SELECT state, attempts FROM webhook_deliveries WHERE endpoint_id = $1', [endpointId]);
    expect(delivered.rows).toEqual([{ state: 'delivered', attempts: 1 }]);
  });
});
