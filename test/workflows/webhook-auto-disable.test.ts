// Auto-disable (docs/webhooks.md "Auto-disable") on the time-skipping test server, with the default
// WEBHOOK_AUTO_DISABLE_AFTER of 5 days measured on Temporal's clock: the real delivery activity
// (run by redelivery workflows, the test events' path) sends a test event on days 0, 1, 2, 3, 4
// and 5.5 of skipped time to real local receivers, each event retried on the production schedule
// (1 min .. 8 h, 10 h 36 min in all) before the next.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Pool } from '../../db/pool.js';
import { createTestEvent, createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import type { WebhookEventType } from '../../domain/vocabulary.js';
import { startRedelivery } from '../../temporal/client.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { until } from '../support/until.js';
import {
  insertIssuer,
  registerDispatch,
  registration,
  startTimeSkippingTestbed,
  type TimeSkippingTestbed,
} from '../support/workflow-env.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let testbed: TimeSkippingTestbed;
let env: TestWorkflowEnvironment;
let pool: Pool;
let taskQueue: string;
const receivers: Receiver[] = [];

beforeAll(async () => {
  testbed = await startTimeSkippingTestbed();
  ({ env, pool, taskQueue } = testbed);
});

afterAll(async () => {
  for (const r of receivers) await r.close();
  await testbed?.stop();
});

async function endpointOn(issuerId: string, respond: Receiver['respond'], events: WebhookEventType[]) {
  const receiver = await startReceiver({ respond });
  receivers.push(receiver);
  const created = await createWebhookEndpoint(pool, { issuerId, url: receiver.url, events });
  if (!created.ok) throw new Error(created.reason);
  return { receiver, id: created.endpoint.id };
}

/**
 * A test event to each endpoint, then 12 h of skipped time (the server runs each attempt as its
 * retry timer fires): every delivery has settled, delivered, undeliverable or skipped.
 */
async function sendEventAndSkip12Hours(issuerId: string, endpointIds: string[]) {
  const deliveries: Array<{ eventId: string; endpointId: string }> = [];
  for (const id of endpointIds) deliveries.push((await createTestEvent(pool, issuerId, id, 'status.updated'))!);
  await startRedelivery(env.client, taskQueue, deliveries);
  await env.sleep(12 * HOUR);
  const settled = async () => {
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_id = ANY ($1) AND state = 'pending'`, [
      deliveries.map((d) => d.eventId),
    ]);
    return rows[0].n === 0;
  };
  await until(settled, 'the day’s deliveries settled');
  return deliveries;
}

const endpointRow = async (id: string) =>
  (await pool.query('SELECT paused_at, paused_reason, failing_since FROM webhook_endpoints WHERE id = $1', [id])).rows[0];

describe('auto-disable after 5 days of failures, on Temporal’s clock', () => {
  it('disables the endpoint that failed every attempt for 5 days, which stops receiving, tells the subscribed endpoint, and spares the one that recovered in between', async () => {
    const issuerId = await insertIssuer(pool);
    const events: WebhookEventType[] = ['status.updated', 'delivery.predicted'];
    const failing = await endpointOn(issuerId, () => 500, events);
    let recovered = false;
    const recovering = await endpointOn(issuerId, () => (recovered ? 200 : 500), events);
    const watcher = await endpointOn(issuerId, () => 200, ['webhook_endpoint.disabled']);

    // Day 4's last attempt comes 4 days 10 h 36 min after the first failure, day 5.5's first one 5.5
    // days after it. The recovering endpoint answers 200 on day 3 only.
    const started = await env.currentTimeMs();
    const days = [0, 1, 2, 3, 4, 5.5];
    let last: Array<{ eventId: string; endpointId: string }> = [];
    for (const [i, day] of days.entries()) {
      recovered = day === 3;
      last = await sendEventAndSkip12Hours(issuerId, [failing.id, recovering.id]);
      if (i + 1 < days.length) {
        expect(await endpointRow(failing.id)).toMatchObject({ paused_at: null });
        await env.sleep((days[i + 1] - day) * DAY - 12 * HOUR);
      }
    }
    recovered = false;
    expect((await env.currentTimeMs()) - started).toBeGreaterThan(5.5 * DAY);

    // Disabled by day 5.5's first attempt: 5 × 6 attempts before it, then its retry parked.
    expect(await endpointRow(failing.id)).toMatchObject({ paused_at: expect.any(Date), paused_reason: 'failing' });
    expect(failing.receiver.requests).toHaveLength(31);
    const { rows: parked } = await pool.query('SELECT state, skipped_reason, attempts FROM webhook_deliveries WHERE event_id = $1', [
      last[0].eventId,
    ]);
    expect(parked).toEqual([{ state: 'skipped', skipped_reason: 'endpoint disabled: failing', attempts: 1 }]);

    // The issuer's endpoint subscribed to webhook_endpoint.disabled is told, once.
    const told = await until(() => watcher.receiver.requests[0], 'webhook_endpoint.disabled');
    expect(JSON.parse(told.body.toString('utf8'))).toMatchObject({
      event: 'webhook_endpoint.disabled',
      data: { id: failing.id, url: failing.receiver.url, disabled_reason: 'failing' },
    });

    // The endpoint that succeeded on day 3 (its one success among 31 attempts) failed for 5.5 days, with a break.
    expect(recovering.receiver.requests).toHaveLength(31);
    expect(await endpointRow(recovering.id)).toMatchObject({ paused_at: null, paused_reason: null, failing_since: expect.any(Date) });

    // It stops receiving: a new dispatch's delivery.predicted reaches the recovering endpoint, not the disabled one.
    recovered = true;
    const reg = registration(issuerId);
    await registerDispatch(env.client, taskQueue, reg);
    await until(
      () => recovering.receiver.requests.some((r) => JSON.parse(r.body.toString('utf8')).event === 'delivery.predicted'),
      'delivery.predicted at the recovering endpoint',
    );
    const { rows: predicted } = await pool.query(
      `SELECT d.state, d.skipped_reason FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
        WHERE ev.dispatch_id = $1 AND ev.type = 'delivery.predicted' AND d.endpoint_id = $2`,
      [reg.id, failing.id],
    );
    expect(predicted).toEqual([{ state: 'skipped', skipped_reason: 'endpoint disabled' }]);
    expect(failing.receiver.requests).toHaveLength(31);
    expect(watcher.receiver.requests).toHaveLength(1);
  }, 180_000);
});
