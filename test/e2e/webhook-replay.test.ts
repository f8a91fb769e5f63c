// Webhooks from the outside in: a dispatch registered and moved through the HTTP API fires signed
// webhook events at a real local receiver (verified with the consumer kit, as a consumer would),
// and the operator's `deliveries replay` (one event, or an endpoint's time range) delivers them again
// with the same body and event id.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { verify, verifyRequest } from '../../consumer-kit/src/index.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { getReplay } from '../../db/webhook-replays.js';
import { bearer, registrationFor, request } from '../api/http.js';
import { runCli } from '../support/cli.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { until as untilProbe } from '../support/until.js';

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
    const updated = await until(() => receiver.requests.slice(before).map((r) => JSON.parse(r.body.toString())).find((e) => e.event === 'status.updated'), 'status.updated'); // prettier-ignore
    // The exception's window differs from the registration's (it starts from today), except when
    // midnight UTC passed between the two on a business day: then no revised window is sent.
    const revised = JSON.stringify(updated.data.prediction) !== JSON.stringify(envelope(0).data.prediction);
    const expected = ['delivery.exception', ...(revised ? ['delivery.predicted'] : []), 'status.updated'];
    await until(() => (receiver.requests.length >= before + expected.length ? true : undefined), 'the exception webhooks');
    const events = receiver.requests.slice(before).map((r) => JSON.parse(r.body.toString()).event);
    expect(events.sort()).toEqual(expected);
    if (!revised) expect(new Date().toISOString().slice(0, 10)).not.toBe(envelope(0).data.dispatch_date.slice(0, 10));
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
    expect(out).toMatchObject({
      id: expect.stringMatching(/^replay-/),
      event_id: eventId,
      status: 'completed',
      total: 1,
      sent: 1,
      delivered: 1,
    });
    const again = receiver.requests.slice(before).filter((r) => r.headers['x-service-event-id'] === eventId);
    expect(again).toHaveLength(1);
    expect(again[0].headers['x-service-event-id']).toBe(eventId);
    expect(again[0].body.equals(original.body)).toBe(true);
  });

  it("recovers an endpoint's events of a time range on `deliveries replay --endpoint --since --until`, reporting its progress", async () => {
    const sent = new Set(receiver.requests.map((r) => String(r.headers['x-service-event-id'])));
    const before = receiver.requests.length;
    const since = new Date(Date.now() - 10 * 60_000).toISOString();
    const until_ = new Date(Date.now() + 60_000).toISOString();
    const result = await cli(['deliveries', 'replay', '--endpoint', endpointId, '--since', since, '--until', until_, '--wait']);
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out).toMatchObject({
      status: 'completed',
      endpoint_id: endpointId,
      total: sent.size,
      sent: sent.size,
      delivered: sent.size,
      failed: 0,
    });
    const again = receiver.requests.slice(before).map((r) => String(r.headers['x-service-event-id']));
    expect(new Set(again)).toEqual(sent);
    expect(again).toHaveLength(sent.size);
  });

  it('refuses a replay with neither an event nor a complete range, in one line', async () => {
    const result = await cli(['deliveries', 'replay', '--endpoint', endpointId]);
    expect(result.code).not.toBe(0);
    expect(result.stderr.trim()).toMatch(/--since and --until/);
  });
});

describe('a range replay larger than one workflow task can hold', () => {
  const COUNT = 5000;

  it('delivers 5,000 undeliverable events again, paged with bounded concurrency, its progress visible in the CLI', async () => {
    const big = await startReceiver();
    try {
      const issuerId = await h.createIssuer('Bulk replay');
      const created = await createWebhookEndpoint(h.pool, { issuerId, url: big.url, events: ['status.updated'] });
      if (!created.ok) throw new Error(created.reason);
      const bulkEndpoint = created.endpoint.id;
      // Seeded straight in Postgres: 5,000 events of an outage, each undeliverable after its 6 attempts.
      const since = new Date(Date.now() - 3 * 3_600_000);
      const { rows } = await h.pool.query<{ id: string }>(
        `WITH ev AS (
           INSERT INTO webhook_events (id, dispatch_id, issuer_id, mode, type, timestamp, body, created_at)
           SELECT $1 || lpad(g::text, 5, '0'), gen_random_uuid(), $2, 'live', 'status.updated', $3::timestamptz + g * interval '1 second',
                  convert_to('{"event":"status.updated","n":' || g || '}', 'UTF8'), $3::timestamptz + g * interval '1 second'
             FROM generate_series(1, $4::int) g
           RETURNING id)
         INSERT INTO webhook_deliveries (event_id, endpoint_id, state, attempts, last_attempt_at)
         SELECT id, $5, 'undeliverable', 6, now() FROM ev RETURNING event_id AS id`,
        [`evt_bulk${Date.now().toString(36)}_`, issuerId, since, COUNT, bulkEndpoint],
      );
      expect(rows).toHaveLength(COUNT);

      const result = await runCli(
        ['deliveries', 'replay', '--endpoint', bulkEndpoint, '--since', since.toISOString(), '--until', new Date().toISOString(), '--json'],
        { DATABASE_URL: h.config.DATABASE_URL!, TEMPORAL_ADDRESS: h.config.TEMPORAL_ADDRESS!, TEMPORAL_TASK_QUEUE: h.taskQueue },
      );
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      const started = JSON.parse(result.stdout);
      expect(started).toMatchObject({ id: expect.stringMatching(/^replay-/), endpoint_id: bulkEndpoint, total: COUNT });

      const status = () =>
        runCli(['deliveries', 'replay-status', '--id', started.id, '--json'], {
          DATABASE_URL: h.config.DATABASE_URL!,
          TEMPORAL_ADDRESS: h.config.TEMPORAL_ADDRESS!,
        }).then((r) => JSON.parse(r.stdout));
      // Progress moves page by page and never backwards.
      const seen: number[] = [];
      await untilProbe(
        async () => {
          const now = (await getReplay(h.pool, started.id))!;
          seen.push(now.sent);
          return now.status === 'completed' ? true : undefined;
        },
        'the replay to complete',
        280_000,
      );
      expect([...seen].sort((a, b) => a - b)).toEqual(seen);
      expect(await status()).toMatchObject({ status: 'completed', total: COUNT, sent: COUNT, delivered: COUNT, failed: 0, skipped: 0 });

      const arrived = new Set(big.requests.map((r) => String(r.headers['x-service-event-id'])));
      expect(arrived).toEqual(new Set(rows.map((r) => r.id)));
      // Each undeliverable delivery started a new cycle at attempt 1, and was sent once.
      expect(big.requests).toHaveLength(COUNT);
      expect(big.requests.every((r) => r.headers['x-service-delivery-attempt'] === '1')).toBe(true);
      const states = await h.pool.query(`SELECT state, attempts, count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 GROUP BY 1, 2`, [bulkEndpoint]); // prettier-ignore
      expect(states.rows).toEqual([{ state: 'delivered', attempts: 1, n: COUNT }]);
    } finally {
      await big.close();
    }
  }, 300_000);
});
