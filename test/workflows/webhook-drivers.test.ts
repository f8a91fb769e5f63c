// docs/webhooks.md "One driver per pending delivery", against the real Temporal dev server and
// Postgres: the reconciler re-drives a pending delivery nobody drives; a replay touches no delivery before
// its workflow has started, and none before it is about to drive it; a replay that takes over an attempt
// in flight numbers its own after it.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { replayDeliveries } from '../../ingest/webhook-replays.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { getReplay } from '../../db/webhook-replays.js';
import { createWebhookEvents, type NewWebhookEvent } from '../support/webhook-events.js';
import type { StatusRecord } from '../../domain/dispatch-schemas.js';
import type { WebhookEventType } from '../../domain/vocabulary.js';
import { RECONCILE_DELIVERIES_WORKFLOW_TYPE } from '../../temporal/contract.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { until } from '../support/until.js';

let h: Harness;
let receiver: Receiver;
let issuerId: string;

beforeAll(async () => {
  // Retries 3 s apart: a replay's retry comes after the attempt it took over has ended.
  h = await startHarness({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_SCHEDULE: '3s,3s,3s,3s,3s' } });
  receiver = await startReceiver();
  issuerId = await h.createIssuer('Drivers');
  const created = await createWebhookEndpoint(h.pool, {
    issuerId,
    url: receiver.url,
    events: ['status.updated', 'delivery.predicted', 'delivery.exception'],
  });
  if (!created.ok) throw new Error(created.reason);
}, 60_000);

afterAll(async () => {
  await receiver?.close();
  await h?.stop();
});

const record = (id: string) => ({ id, status: 'dispatched' }) as unknown as StatusRecord;

function events(dispatchId: string, version: number, types: WebhookEventType[]): NewWebhookEvent[] {
  const timestamp = new Date().toISOString();
  return types.map((type) => ({ type, timestamp, data: record(dispatchId), idempotencyKey: `${dispatchId}:${version}:${type}` }));
}

/** An event with one delivery to the test endpoint, settled as undeliverable after 6 attempts. */
async function undeliverableEvent(): Promise<string> {
  const dispatchId = randomUUID();
  const [delivery] = await createWebhookEvents(h.pool, {
    dispatchId,
    issuerId,
    mode: 'live',
    events: events(dispatchId, 1, ['status.updated']),
  });
  await h.pool.query(`UPDATE webhook_deliveries SET state = 'undeliverable', attempts = 6 WHERE event_id = $1`, [delivery.eventId]);
  return delivery.eventId;
}

const deliveryOf = async (eventId: string) =>
  (await h.pool.query('SELECT state, attempts, driver FROM webhook_deliveries WHERE event_id = $1', [eventId])).rows[0];

describe('the reconciler', () => {
  it('re-drives a pending delivery that has had no running driver for longer than the grace period', async () => {
    const dispatchId = randomUUID();
    const [orphan] = await createWebhookEvents(h.pool, { dispatchId, issuerId, mode: 'live', events: events(dispatchId, 1, ['delivery.exception']) }); // prettier-ignore
    // Nobody ever started its activity, long ago (older than any other test's pending rows).
    await h.pool.query(`UPDATE webhook_deliveries SET created_at = now() - interval '30 days' WHERE event_id = $1`, [orphan.eventId]);
    const result = await h.temporal.workflow.execute(RECONCILE_DELIVERIES_WORKFLOW_TYPE, {
      workflowId: `reconcile-test-${randomUUID()}`,
      taskQueue: h.taskQueue,
      args: [{ graceMs: 7 * 86_400_000 }],
    });
    expect(result).toEqual({ redriven: 1 });
    await until(() => receiver.requests.some((r) => r.headers['x-service-event-id'] === orphan.eventId), 'the orphan to be delivered');
    await until(async () => ((await deliveryOf(orphan.eventId)).state === 'delivered' ? true : undefined), 'the delivery to settle');
    expect(await deliveryOf(orphan.eventId)).toEqual({ state: 'delivered', attempts: 1, driver: expect.stringMatching(/^reconcile-/) });
  });
});

describe('a replay', () => {
  it('whose workflow cannot be started leaves every delivery as it was and the replay marked failed', async () => {
    const eventId = await undeliverableEvent();
    const connection = await Connection.connect({ address: h.config.TEMPORAL_ADDRESS! });
    const closed = new Client({ connection });
    await connection.close();
    const progress: string[] = [];
    await expect(
      replayDeliveries({ pool: h.pool, temporal: closed, taskQueue: h.taskQueue }, { eventId }).catch(async (error) => {
        const { rows } = await h.pool.query(`SELECT id FROM webhook_replays WHERE event_id = $1`, [eventId]);
        for (const row of rows) progress.push((await getReplay(h.pool, row.id))!.status);
        throw error;
      }),
    ).rejects.toThrow();
    expect(await deliveryOf(eventId)).toEqual({ state: 'undeliverable', attempts: 6, driver: null });
    expect(progress).toEqual(['failed']);
  });

  it('resets no delivery before it drives it: undriven deliveries stay undeliverable', async () => {
    const eventId = await undeliverableEvent();
    // A task queue no worker polls: the replay starts, and nothing drives its deliveries.
    const replay = await replayDeliveries({ pool: h.pool, temporal: h.temporal, taskQueue: `idle-${randomUUID()}` }, { eventId });
    try {
      expect(replay?.total).toBe(1);
      expect((await getReplay(h.pool, replay!.id))?.status).toBe('running');
      expect(await deliveryOf(eventId)).toEqual({ state: 'undeliverable', attempts: 6, driver: null });
    } finally {
      await replay?.handle.terminate('test over');
    }
  });

  it('that takes over a delivery whose attempt is in flight numbers its attempts after it: none repeated, none skipped', async () => {
    // Attempt 3 is held open 2.5 s and fails; the replay's first attempt fails too, its retry succeeds.
    const held = await startReceiver({
      respond: async (n) => {
        if (n === 1) await new Promise((resolve) => setTimeout(resolve, 2500));
        return n <= 2 ? 500 : 200;
      },
    });
    try {
      const owner = await h.createIssuer('Drivers takeover');
      const endpoint = await createWebhookEndpoint(h.pool, { issuerId: owner, url: held.url, events: ['status.updated'] });
      if (!endpoint.ok) throw new Error(endpoint.reason);
      const dispatchId = randomUUID();
      const [delivery] = await createWebhookEvents(h.pool, { dispatchId, issuerId: owner, mode: 'live', events: events(dispatchId, 1, ['status.updated']) }); // prettier-ignore
      // Two attempts made already: the next one is 3.
      await h.pool.query(`UPDATE webhook_deliveries SET attempts = 2 WHERE event_id = $1`, [delivery.eventId]);
      const deps = { pool: h.pool, temporal: h.temporal, taskQueue: h.taskQueue };
      await replayDeliveries(deps, { eventId: delivery.eventId });
      await until(() => held.requests.length === 1, 'attempt 3 to be in flight');
      const replay = await replayDeliveries(deps, { eventId: delivery.eventId });
      await until(async () => ((await deliveryOf(delivery.eventId)).state === 'delivered' ? true : undefined), 'the delivery to settle');
      await replay!.handle.result();
      expect(held.requests.map((r) => r.headers['x-service-delivery-attempt'])).toEqual(['3', '4', '5']);
      expect(await deliveryOf(delivery.eventId)).toEqual({ state: 'delivered', attempts: 5, driver: replay!.id });
      const logged = await h.pool.query('SELECT attempt FROM delivery_attempts WHERE event_id = $1 ORDER BY attempt', [delivery.eventId]);
      expect(logged.rows.map((row) => row.attempt)).toEqual([3, 4, 5]);
    } finally {
      await held.close();
    }
  }, 30_000);
});
