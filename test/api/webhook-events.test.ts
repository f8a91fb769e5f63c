// Webhook events as an API (docs/webhooks.md "Webhook events"): GET /v1/events lists the issuer's
// events of the key's mode newest first, filtered by type, dispatch_id and since, a page at a time;
// GET /v1/events/{id} adds each endpoint's delivery with every attempt (a real local receiver that
// fails the first attempt). Another issuer's or the other mode's event is 404; webhooks:read needed.
// (test/api/events.test.ts is POST /v1/dispatches/{id}/events, the carrier events.)
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startHarness, type Harness } from '../support/harness.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { until } from '../support/until.js';
import { bearer, registrationFor, request, type TestResponse } from './http.js';

let h: Harness;
let receiver: Receiver;
let key: string;
let liveKey: string;
let statusOnlyKey: string;
let otherKey: string;
let endpointId: string;
let dispatchId: string;
let beforeShip: string;

const get = (path: string, withKey = key): Promise<TestResponse> => request(h.baseUrl, path, { headers: bearer(withKey) });

beforeAll(async () => {
  h = await startHarness({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_SCHEDULE: '1s,1s' } });
  // Every delivery's first attempt fails with 500; its retry a second later succeeds.
  const seen = new Set<string>();
  receiver = await startReceiver();
  receiver.respond = (n) => {
    const id = String(receiver.requests[n - 1].headers['x-service-event-id']);
    if (seen.has(id)) return 200;
    seen.add(id);
    return 500;
  };
  const issuer = await h.createIssuer('Events API Issuer');
  key = (await h.createKey(issuer, { mode: 'test' })).key;
  liveKey = (await h.createKey(issuer)).key;
  statusOnlyKey = (await h.createKey(issuer, { mode: 'test', scopes: ['status:read'] })).key;
  otherKey = (await h.createKey(await h.createIssuer('Other Events Issuer'), { mode: 'test' })).key;
  const endpoint = await request(h.baseUrl, '/v1/webhook_endpoints', {
    headers: bearer(key),
    body: { url: receiver.url, events: ['status.updated', 'delivery.predicted', 'delivery.completed', 'delivery.exception'] },
  });
  endpointId = endpoint.body.id;

  dispatchId = randomUUID();
  expect((await request(h.baseUrl, '/v1/dispatches', { headers: bearer(key), body: registrationFor(dispatchId) })).status).toBe(201);
  await until(async () => (await get(`/v1/events?dispatch_id=${dispatchId}`)).body.data.length > 0, 'the registration event');
  beforeShip = new Date().toISOString();
  await new Promise((resolve) => setTimeout(resolve, 20));
  const shipped = await request(h.baseUrl, `/v1/test_helpers/dispatches/${dispatchId}/ship`, { method: 'POST', headers: bearer(key) });
  expect(shipped.status).toBe(200);
  await until(
    async () => (await get(`/v1/events?dispatch_id=${dispatchId}&type=status.updated`)).body.data.length > 0,
    'the status.updated event',
  );
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await h?.stop();
});

describe('GET /v1/events', () => {
  it("lists the dispatch's events newest first, with the webhook's data", async () => {
    const response = await get(`/v1/events?dispatch_id=${dispatchId}`);
    expect(response.status).toBe(200);
    const events = response.body.data as Array<{ id: string; type: string; dispatch_id: string; created_at: string; data: { id: string; status: string } }>; // prettier-ignore
    expect(events.length).toBeGreaterThanOrEqual(2);
    for (const event of events) {
      expect(event).toEqual({ id: expect.stringMatching(/^evt_/), type: expect.any(String), dispatch_id: dispatchId, created_at: expect.any(String), data: expect.objectContaining({ id: dispatchId }) }); // prettier-ignore
    }
    const times = events.map((e) => Date.parse(e.created_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(events[0]).toMatchObject({ type: 'status.updated', data: { status: 'in_transit' } });
    expect(response.body.next_cursor).toBeNull();
  });

  it('filters by type and by since', async () => {
    const byType = await get(`/v1/events?dispatch_id=${dispatchId}&type=status.updated`);
    expect(byType.body.data.map((e: { type: string }) => e.type)).toEqual(['status.updated']);
    const all = (await get(`/v1/events?dispatch_id=${dispatchId}`)).body.data as Array<{ created_at: string }>;
    const recent = (await get(`/v1/events?dispatch_id=${dispatchId}&since=${beforeShip}`)).body.data as Array<{ created_at: string }>;
    expect(recent.length).toBeGreaterThan(0);
    expect(recent.length).toBeLessThan(all.length);
    expect(recent.every((e) => e.created_at >= beforeShip)).toBe(true);
  });

  it('pages with next_cursor without repeating or skipping an event', async () => {
    const all = (await get(`/v1/events?dispatch_id=${dispatchId}`)).body.data.map((e: { id: string }) => e.id);
    const first = await get(`/v1/events?dispatch_id=${dispatchId}&limit=1`);
    expect(first.body.data.map((e: { id: string }) => e.id)).toEqual(all.slice(0, 1));
    const rest = await get(`/v1/events?dispatch_id=${dispatchId}&limit=100&cursor=${first.body.next_cursor}`);
    expect(rest.body.data.map((e: { id: string }) => e.id)).toEqual(all.slice(1));
  });

  it("lists only the key's mode and issuer", async () => {
    expect((await get(`/v1/events?dispatch_id=${dispatchId}`, liveKey)).body.data).toEqual([]);
    expect((await get(`/v1/events?dispatch_id=${dispatchId}`, otherKey)).body.data).toEqual([]);
  });

  it.each([
    ['type=card.lost', /^type: /],
    ['dispatch_id=nope', /^dispatch_id: /],
    ['since=yesterday', /^since: /],
    ['limit=0', /^limit: /],
    ['cursor=abc', /^cursor: /],
    // A cursor tampered into a day that does not exist (Feb 30): once a 500 from Postgres.
    [`cursor=${Buffer.from('2026-02-30T10:00:00.000000Z|evt_0123456789abcdef').toString('base64url')}`, /^cursor: /],
    ['status=delivered', /status/],
    ['type=status.updated&type=delivery.completed', /^type: must be given once/],
  ])('returns 400 naming the parameter for ?%s, before the scope', async (query, message) => {
    const response = await get(`/v1/events?${query}`, statusOnlyKey);
    expect(response.status).toBe(400);
    expect(response.body.message).toMatch(message);
  });

  it('returns 403 without webhooks:read', async () => {
    expect((await get('/v1/events', statusOnlyKey)).status).toBe(403);
  });
});

describe('GET /v1/events/{id}', () => {
  it('shows each delivery with every attempt: the failed first one and the delivered retry', async () => {
    const [event] = (await get(`/v1/events?dispatch_id=${dispatchId}&type=status.updated`)).body.data;
    const detail = await until(async () => {
      const response = await get(`/v1/events/${event.id}`);
      return response.body.deliveries?.[0]?.state === 'delivered' ? response : undefined;
    }, 'the delivered retry');
    expect(detail.body).toEqual({
      ...event,
      deliveries: [
        {
          endpoint_id: endpointId,
          state: 'delivered',
          attempts: [
            { number: 1, attempted_at: expect.any(String), status_code: 500, outcome: 'failed', duration_ms: expect.any(Number) },
            { number: 2, attempted_at: expect.any(String), status_code: 200, outcome: 'delivered', duration_ms: expect.any(Number) },
          ],
        },
      ],
    });
  });

  it("returns 404 for another issuer's or the other mode's event, 400 for a malformed id", async () => {
    const [event] = (await get(`/v1/events?dispatch_id=${dispatchId}`)).body.data;
    expect((await get(`/v1/events/${event.id}`, otherKey)).status).toBe(404);
    expect((await get(`/v1/events/${event.id}`, liveKey)).status).toBe(404);
    expect((await get('/v1/events/evt_0000000000000000')).status).toBe(404);
    const malformed = await get('/v1/events/nope', statusOnlyKey);
    expect(malformed.status).toBe(400);
    expect(malformed.body.message).toMatch(/^webhook_event_id: /);
    expect((await get(`/v1/events/${event.id}`, statusOnlyKey)).status).toBe(403);
  });
});
