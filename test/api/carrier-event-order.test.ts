// docs/states.md "The status is a function of the set of events", black-box:
// carrier events go through the API to a running worker, and the status and the webhooks a
// consumer receives depend on the set of events, not on when the dispatch was registered or in
// which order the carrier feed sent them.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { until } from '../support/until.js';
import { bearer, request } from './http.js';

let h: Harness;
let key: string;
let receiver: Receiver;

beforeAll(async () => {
  h = await startHarness({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  receiver = await startReceiver();
  const issuerId = await h.createIssuer('Event Order Issuer');
  key = (await h.createKey(issuerId)).key;
  const created = await createWebhookEndpoint(h.pool, { issuerId, url: receiver.url, events: ['status.updated', 'delivery.exception'] });
  if (!created.ok) throw new Error(created.reason);
}, 60_000);

afterAll(async () => {
  await receiver?.close();
  await h?.stop();
});

const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

async function register(body: Record<string, unknown> = {}): Promise<string> {
  const id = randomUUID();
  const res = await request(h.baseUrl, '/v1/dispatches', {
    headers: bearer(key),
    body: { id, destination: { postal_code: '75011', country_code: 'FR' }, ...body },
  });
  expect(res.status).toBe(201);
  return id;
}

async function postEvent(id: string, body: Record<string, unknown>) {
  const res = await request(h.baseUrl, `/v1/dispatches/${id}/events`, { headers: bearer(key), body });
  expect(res.status).toBe(202);
}

const webhooksOf = (id: string) =>
  receiver.requests.map((r) => JSON.parse(r.body.toString('utf8'))).filter((body) => body.data.id === id) as Array<{
    event: string;
    data: { status: string };
  }>;

async function statusOf(id: string): Promise<string> {
  const res = await request(h.baseUrl, `/v1/status/${id}`, { headers: bearer(key) });
  return res.body.status;
}

describe('a carrier scan dated before registration', () => {
  it('moves a dispatch registered without dispatch_date to in_transit and sends status.updated', async () => {
    const id = await register();
    await postEvent(id, { status: 'in_transit', occurred_at: ago(2 * 60_000) });
    await until(async () => (await statusOf(id)) === 'in_transit', 'the dispatch to be in_transit', 20_000);
    const sent = await until(() => webhooksOf(id).find((w) => w.event === 'status.updated'), 'a status.updated webhook', 20_000);
    expect(sent.data.status).toBe('in_transit');
  });

  it('counts a scan a few seconds before a later dispatch_date too (clocks differ)', async () => {
    const id = await register({ dispatch_date: ago(0) });
    await postEvent(id, { status: 'out_for_delivery', occurred_at: ago(5_000) });
    await until(async () => (await statusOf(id)) === 'out_for_delivery', 'the dispatch to be out_for_delivery', 20_000);
  });
});

describe('out-of-order carrier feeds', () => {
  it('ends in the same status whichever order an exception and a later scan arrive in', async () => {
    const events = [
      { status: 'in_transit', occurred_at: ago(3 * 3_600_000), event_id: 'a' },
      { status: 'exception', occurred_at: ago(2 * 3_600_000), reason: 'failed_attempt', event_id: 'b' },
      { status: 'in_transit', occurred_at: ago(1 * 3_600_000), event_id: 'c' },
    ];
    const forward = await register({ dispatch_date: ago(4 * 3_600_000) });
    const backward = await register({ dispatch_date: ago(4 * 3_600_000) });
    for (const event of events) await postEvent(forward, event);
    for (const event of [...events].reverse()) await postEvent(backward, event);
    // The newest scan is later than the exception: both cards are in transit again.
    for (const id of [forward, backward]) {
      await until(async () => (await request(h.baseUrl, `/v1/status/${id}`, { headers: bearer(key) })).body.status === 'in_transit', `${id} in_transit`, 20_000); // prettier-ignore
    }
    // Arrival order decides the webhooks sent on the way, never the end: the card that saw the
    // exception last never entered it (its in_transit was later).
    await until(
      () => webhooksOf(forward).some((w) => w.event === 'delivery.exception'),
      'the forward feed to fire delivery.exception',
      20_000,
    );
    expect(webhooksOf(backward).some((w) => w.event === 'delivery.exception')).toBe(false);
  });
});
