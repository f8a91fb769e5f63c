// Auto-disable (docs/webhooks.md "Auto-disable"): an endpoint that has failed every attempt for
// WEBHOOK_AUTO_DISABLE_AFTER is disabled with the reason `failing`, the issuer's other endpoints
// subscribed to webhook_endpoint.disabled are told, and enabling it again answers what it missed.
// The service's own harness (API + worker) with the threshold at 2 s and retries 1 s apart, against
// real local receivers; the success-in-between case drives the delivery activity run by run.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ApplicationFailure, Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createWebhookDeliveryActivities } from '../../activities/webhook-delivery.js';
import { createTestEvent } from '../../db/webhook-endpoints.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { until } from '../support/until.js';
import { bearer, request } from './http.js';

let h: Harness;
let key: string;
let issuerId: string;
const receivers: Receiver[] = [];

const api = (method: string, path: string, body?: unknown) => request(h.baseUrl, path, { method, headers: bearer(key), body });

async function receiver(status: number): Promise<Receiver> {
  const started = await startReceiver({ respond: () => status });
  receivers.push(started);
  return started;
}

async function endpoint(url: string, events: string[]): Promise<string> {
  const res = await api('POST', '/v1/webhook_endpoints', { url, events });
  expect(res.status).toBe(201);
  return (res.body as { id: string }).id;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  h = await startHarness({
    env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_AUTO_DISABLE_AFTER: '2s', WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s' },
  });
  issuerId = await h.createIssuer('Failing Issuer');
  key = (await h.createKey(issuerId)).key;
}, 60_000);

afterAll(async () => {
  for (const r of receivers) await r.close();
  await h?.stop();
});

describe('auto-disable', () => {
  it('disables an endpoint failing past WEBHOOK_AUTO_DISABLE_AFTER, tells the other endpoint, parks its delivery, and reports what it missed when enabled', async () => {
    const failing = await receiver(500);
    const watcher = await receiver(200);
    const failingId = await endpoint(failing.url, ['status.updated']);
    await endpoint(watcher.url, ['webhook_endpoint.disabled']);

    const sent = await api('POST', `/v1/webhook_endpoints/${failingId}/test`, { type: 'status.updated' });
    expect(sent.status).toBe(202);
    const eventId = (sent.body as { id: string }).id;

    const disabled = await until(async () => {
      const res = await api('GET', `/v1/webhook_endpoints/${failingId}`);
      return (res.body as { disabled: boolean }).disabled ? (res.body as Record<string, unknown>) : undefined;
    }, 'the endpoint disabled');
    expect(disabled).toMatchObject({ disabled: true, disabled_reason: 'failing', disabled_at: expect.any(String) });
    // Disabled only once its failures had lasted the threshold: at least three attempts, 1 s apart.
    expect(failing.requests.length).toBeGreaterThanOrEqual(3);

    // The issuer's other endpoint receives webhook_endpoint.disabled, its data the endpoint (not a status record).
    const told = await until(() => watcher.requests[0], 'webhook_endpoint.disabled');
    expect(JSON.parse(told.body.toString('utf8'))).toEqual({
      event: 'webhook_endpoint.disabled',
      timestamp: disabled.disabled_at,
      data: { id: failingId, url: failing.url, disabled_reason: 'failing', disabled_at: disabled.disabled_at },
    });

    // The pending delivery is parked at its next attempt: skipped (replayable), not undeliverable.
    const parked = await until(async () => {
      const { rows } = await h.pool.query('SELECT state, skipped_reason FROM webhook_deliveries WHERE event_id = $1', [eventId]);
      return rows[0]?.state === 'skipped' ? rows[0] : undefined;
    }, 'the delivery parked');
    expect(parked).toEqual({ state: 'skipped', skipped_reason: 'endpoint disabled: failing' });
    const attemptsWhileDisabled = failing.requests.length;
    expect(attemptsWhileDisabled).toBeLessThan(6);

    // Enabled again: what it missed since its first failure, and the replay call recovers it.
    const enabled = await api('PATCH', `/v1/webhook_endpoints/${failingId}`, { disabled: false });
    expect(enabled.status).toBe(200);
    const body = enabled.body as { disabled: boolean; disabled_reason: null; disabled_at: null; missed: { since: string; until: string; count: number } }; // prettier-ignore
    expect(body).toMatchObject({ disabled: false, disabled_reason: null, disabled_at: null, missed: { count: 1 } });
    expect(Date.parse(body.missed.since)).toBeLessThan(Date.parse(String(disabled.disabled_at)));
    expect(Date.parse(body.missed.until)).toBeGreaterThan(Date.parse(String(disabled.disabled_at)));
    failing.respond = () => 200;
    const replay = await api('POST', `/v1/webhook_endpoints/${failingId}/replay`, { since: body.missed.since, until: body.missed.until });
    expect(replay.status).toBe(202);
    await until(() => failing.requests.length > attemptsWhileDisabled, 'the missed event replayed');
    const replayed = failing.requests.at(-1)!;
    expect(replayed.headers['x-service-event-id']).toBe(eventId);
    expect(replayed.headers['x-service-delivery-attempt']).toBe('1');
  }, 60_000);

  it('does not disable an endpoint whose failures were interrupted by a successful attempt, and does once they last the threshold', async () => {
    const flaky = await receiver(500);
    const id = await endpoint(flaky.url, ['status.updated']);
    const activities = createWebhookDeliveryActivities({ pool: h.pool, config: h.config });
    // The threshold is measured on Temporal's clock, the attempt's scheduled time: each run is scheduled now.
    const quiet: Logger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
    const run = async (delivery: { eventId: string; endpointId: string }) =>
      new MockActivityEnvironment({ currentAttemptScheduledTimestampMs: Date.now() }, { logger: quiet }).run(activities.deliverWebhook, delivery).catch((failure: unknown) => failure as ApplicationFailure); // prettier-ignore
    const failingEvent = (await createTestEvent(h.pool, issuerId, id, 'status.updated'))!;
    const state = async () => ((await api('GET', `/v1/webhook_endpoints/${id}`)).body as { disabled: boolean; disabled_reason: string | null }); // prettier-ignore

    await run(failingEvent); // fails: failing since now
    await sleep(1200);
    flaky.respond = () => 200;
    expect(await run((await createTestEvent(h.pool, issuerId, id, 'status.updated'))!)).toEqual({ outcome: 'delivered', attempts: 1 });
    flaky.respond = () => 500;
    await sleep(1200);
    await run(failingEvent); // 2.4 s after the first failure, but 1.2 s after the success
    expect(await state()).toMatchObject({ disabled: false, disabled_reason: null });

    await sleep(2100);
    await run(failingEvent); // every attempt failed for more than 2 s
    expect(await state()).toMatchObject({ disabled: true, disabled_reason: 'failing' });
  }, 60_000);
});
