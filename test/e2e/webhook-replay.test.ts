// Webhooks from the outside in: a dispatch registered and moved through the HTTP API fires signed
// webhook events at a real local receiver (verified with the consumer kit, as a consumer would),
// and the operator's `deliveries replay` (one event, or an endpoint's time range) delivers them again
// with the same body and event id.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { verify, verifyRequest } from '../../consumer-kit/src/index.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { bearer, registrationFor, request } from '../api/http.js';
import { runCli } from '../support/cli.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

let h: Harness;
let receiver: Receiver;
let key: string;
let endpointId: string;
let secret: string;

beforeAll(async () => {
  h = await startHarness({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  receiver = await startReceiver();
  const issuerId = await h.createIssuer();
  key = (await h.createKey(issuerId)).key;
  const created = await createWebhookEndpoint(h.pool, {
    issuerId,
    url: receiver.url,
    events: ['status.updated', 'delivery.predicted', 'delivery.completed', 'delivery.exception'],
  });
  if (!created.ok) throw new Error(created.reason);
  endpointId = created.endpoint.id;
  secret = created.secret;
}, 60_000);

afterAll(async () => {
  await receiver?.close();
  await h?.stop();
});

async function until<T>(probe: () => T | undefined, what: string): Promise<T> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
    const value = probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const envelope = (i: number) => JSON.parse(receiver.requests[i].body.toString('utf8'));

function cli(args: string[]) {
  return runCli([...args, '--json'], {
    DATABASE_URL: h.config.DATABASE_URL!,
    TEMPORAL_ADDRESS: h.config.TEMPORAL_ADDRESS!,
    TEMPORAL_TASK_QUEUE: h.taskQueue,
  });
}

describe('webhooks through the API', () => {
  let dispatchId: string;

  it('sends a signed delivery.predicted at registration that the consumer kit verifies and parses', async () => {
    dispatchId = randomUUID();
    const res = await request(h.baseUrl, '/v1/dispatches', { method: 'POST', headers: bearer(key), body: registrationFor(dispatchId) });
    expect(res.status).toBe(201);
    const first = await until(() => receiver.requests[0], 'the first webhook');
    expect(first.headers['content-type']).toBe('application/json');
    expect(verify(first.body, String(first.headers['x-service-signature']), secret)).toBe(true);
    expect(verifyRequest(first.body, first.headers as Record<string, string>, [secret]).ok).toBe(true);
    expect(envelope(0)).toMatchObject({ event: 'delivery.predicted', data: { id: dispatchId, status: 'dispatched' } });
    // `data` is exactly what GET /v1/status returns.
    const status = await request(h.baseUrl, `/v1/status/${dispatchId}`, { headers: bearer(key) });
    expect(envelope(0).data).toEqual(status.body);
  });

  it('sends status.updated, delivery.exception and the revised window (delivery.predicted) for a carrier exception', async () => {
    const before = receiver.requests.length;
    const res = await request(h.baseUrl, `/v1/dispatches/${dispatchId}/events`, {
      method: 'POST',
      headers: bearer(key),
      body: { status: 'exception', occurred_at: new Date().toISOString(), reason: 'failed_attempt', event_id: 'carrier-1' },
    });
    expect(res.status).toBe(202);
    await until(() => (receiver.requests.length >= before + 3 ? true : undefined), 'the exception webhooks');
    const events = receiver.requests.slice(before).map((r) => JSON.parse(r.body.toString()).event);
    expect(events.sort()).toEqual(['delivery.exception', 'delivery.predicted', 'status.updated']);
  });

  it('delivers one event again on `deliveries replay --event-id`, with the same body and event id', async () => {
    const original = receiver.requests[0];
    const eventId = String(original.headers['x-service-event-id']);
    const before = receiver.requests.length;
    const result = await cli(['deliveries', 'replay', '--event-id', eventId, '--wait']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out.data).toEqual([{ event_id: eventId, endpoint_id: endpointId, outcome: 'delivered', attempts: 1 }]);
    const again = receiver.requests.slice(before).filter((r) => r.headers['x-service-event-id'] === eventId);
    expect(again).toHaveLength(1);
    expect(again[0].headers['x-service-event-id']).toBe(eventId);
    expect(again[0].body.equals(original.body)).toBe(true);
  });

  it("recovers an endpoint's events of a time range on `deliveries replay --endpoint --since --until`", async () => {
    const sent = new Set(receiver.requests.map((r) => String(r.headers['x-service-event-id'])));
    const before = receiver.requests.length;
    const since = new Date(Date.now() - 10 * 60_000).toISOString();
    const until_ = new Date(Date.now() + 60_000).toISOString();
    const result = await cli(['deliveries', 'replay', '--endpoint', endpointId, '--since', since, '--until', until_, '--wait']);
    expect(result.code).toBe(0);
    const replayed = JSON.parse(result.stdout).data as Array<{ event_id: string; outcome: string }>;
    expect(new Set(replayed.map((d) => d.event_id))).toEqual(sent);
    expect(replayed.every((d) => d.outcome === 'delivered')).toBe(true);
    expect(receiver.requests.length - before).toBe(sent.size);
  });

  it('refuses a replay with neither an event nor a complete range, in one line', async () => {
    const result = await cli(['deliveries', 'replay', '--endpoint', endpointId]);
    expect(result.code).not.toBe(0);
    expect(result.stderr.trim()).toMatch(/--since and --until/);
  });
});
