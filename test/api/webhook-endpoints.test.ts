// Webhook endpoints as an API (docs/webhooks.md "Webhook endpoints"): create (secret and headers
// once), list, read (headers masked), update, delete, rotate_secret (new secret signs
// X-Service-Signature, both sign webhook-signature), the test event (nil UUID, custom headers sent but
// not recorded), the SSRF guard, the endpoint cap, scopes (400 before 403) and 404 for another issuer's
// or the other mode's endpoint. A real local receiver stands in for the consumer.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { pino } from 'pino';
import { startApi } from '../../api/server.js';
import { verify, verifyStandard } from '../../consumer-kit/src/index.js';
import { createWebhookEndpoint, MAX_ENDPOINTS_PER_ISSUER } from '../../db/webhook-endpoints.js';
import { TEST_EVENT_DISPATCH_ID } from '../../domain/sample-event.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { until } from '../support/until.js';
import { bearer, request, type TestResponse } from './http.js';

let h: Harness;
let receiver: Receiver;
let issuer: string;
let key: string;
let readOnlyKey: string;
let statusOnlyKey: string;
let testKey: string;
let otherKey: string;

const GATEWAY_TOKEN = 'gw-token-0123456789-abcdef';

const call = (method: string, path: string, body?: unknown, withKey = key): Promise<TestResponse> =>
  request(h.baseUrl, path, { method, headers: bearer(withKey), body });

async function created(body: Record<string, unknown> = {}, withKey = key): Promise<Record<string, any>> {
  const response = await call('POST', '/v1/webhook_endpoints', { url: receiver.url, events: ['status.updated', 'delivery.completed'], ...body }, withKey); // prettier-ignore
  expect(response.status).toBe(201);
  return response.body;
}

beforeAll(async () => {
  h = await startHarness({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  receiver = await startReceiver();
  issuer = await h.createIssuer('Endpoints API Issuer');
  key = (await h.createKey(issuer)).key;
  readOnlyKey = (await h.createKey(issuer, { scopes: ['webhooks:read'] })).key;
  statusOnlyKey = (await h.createKey(issuer, { scopes: ['status:read'] })).key;
  testKey = (await h.createKey(issuer, { mode: 'test' })).key;
  otherKey = (await h.createKey(await h.createIssuer('Other Issuer'))).key;
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await h?.stop();
});

describe('POST /v1/webhook_endpoints', () => {
  it('creates an endpoint and answers its secret and custom headers in full, once', async () => {
    const response = await call('POST', '/v1/webhook_endpoints', {
      url: receiver.url,
      events: ['status.updated'],
      description: 'card ops',
      headers: { Authorization: `Bearer ${GATEWAY_TOKEN}` },
      rate_limit: 5,
    });
    expect(response.status).toBe(201);
    expect(response.headers.location).toBe(`/v1/webhook_endpoints/${response.body.id}`);
    expect(response.body).toEqual({
      id: expect.stringMatching(/^whe_[0-9A-Za-z]{16}$/),
      url: receiver.url,
      events: ['status.updated'],
      description: 'card ops',
      disabled: false,
      disabled_reason: null,
      disabled_at: null,
      headers: { Authorization: `Bearer ${GATEWAY_TOKEN}` },
      rate_limit: 5,
      created_at: expect.any(String),
      secret: expect.stringMatching(/^whsec_/),
    });

    const read = await call('GET', `/v1/webhook_endpoints/${response.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body.secret).toBeUndefined();
    expect(read.body.headers).toEqual({ Authorization: '****cdef' });
    expect(read.text).not.toContain(GATEWAY_TOKEN);
  });

  it.each([
    [{ url: 'https://hooks.example.com', events: [] }, /^events: /],
    [{ url: 'https://hooks.example.com', events: ['card.lost'] }, /^events\.0: /],
    [{ url: 'https://hooks.example.com', events: ['status.updated'], secret: 'x' }, /secret/],
    [{ url: 'https://hooks.example.com', events: ['status.updated'], rate_limit: 0 }, /^rate_limit: /],
    [
      { url: 'https://hooks.example.com', events: ['status.updated'], headers: { 'Content-Type': 'text/plain' } },
      /^headers\.Content-Type: reserved/,
    ],
    [
      { url: 'https://hooks.example.com', events: ['status.updated'], headers: { 'X-Service-Tag': 'a' } },
      /^headers\.X-Service-Tag: reserved/,
    ],
    [{ url: 'https://hooks.example.com', events: ['status.updated'], headers: { 'Webhook-Id': 'a' } }, /^headers\.Webhook-Id: reserved/],
    [{ url: 'https://hooks.example.com', events: ['status.updated'], headers: { 'X-Token': 'a\r\nX-Evil: 1' } }, /^headers\.X-Token: /],
    // Control characters: NUL was a 500 from Postgres; a line break the URL parser drops (the URL kept is not the one called).
    [{ url: 'https://hooks.example.com/a\u0000b', events: ['status.updated'] }, /^url: must not contain control characters/],
    [{ url: 'https://hooks.exam\nple.com/', events: ['status.updated'] }, /^url: must not contain control characters/],
    [{ url: 'https://hooks.example.com', events: ['status.updated'], description: 'ops\u0000' }, /^description: must not contain control/],
  ])('returns 400 naming the field for %j', async (body, message) => {
    const response = await call('POST', '/v1/webhook_endpoints', body);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: 'bad_request', message: expect.stringMatching(message) });
  });

  it('refuses a URL that resolves to a private address, as the CLI and the dashboard do', async () => {
    const guarded = await h.startExtraApi({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' });
    const response = await request(guarded.baseUrl, '/v1/webhook_endpoints', {
      headers: bearer(key),
      body: { url: 'http://127.0.0.1:9/hooks', events: ['status.updated'] },
    });
    expect(response.status).toBe(400);
    expect(response.body.message).toMatch(/^url: cannot receive webhooks: /);
  });

  it('checks the body (400) before the scope (403)', async () => {
    expect((await call('POST', '/v1/webhook_endpoints', { url: receiver.url }, readOnlyKey)).status).toBe(400);
    const forbidden = await call('POST', '/v1/webhook_endpoints', { url: receiver.url, events: ['status.updated'] }, readOnlyKey);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.message).toContain('webhooks:write');
  });

  it(`returns 409 once the issuer has ${MAX_ENDPOINTS_PER_ISSUER} endpoints`, async () => {
    const full = await h.createIssuer('Full Issuer');
    for (let i = 0; i < MAX_ENDPOINTS_PER_ISSUER; i += 1) {
      await createWebhookEndpoint(h.pool, { issuerId: full, url: receiver.url, events: ['status.updated'], mode: i % 2 ? 'test' : 'live' });
    }
    const response = await call(
      'POST',
      '/v1/webhook_endpoints',
      { url: receiver.url, events: ['status.updated'] },
      (await h.createKey(full)).key,
    );
    expect(response.status).toBe(409);
    expect(response.body.error).toBe('conflict');
  });

  it('takes the per-issuer limit from WEBHOOK_MAX_ENDPOINTS_PER_ISSUER', async () => {
    const capped = await h.startExtraApi({ WEBHOOK_MAX_ENDPOINTS_PER_ISSUER: '2' });
    const cappedKey = (await h.createKey(await h.createIssuer('Capped Issuer'))).key;
    const add = () =>
      request(capped.baseUrl, '/v1/webhook_endpoints', {
        headers: bearer(cappedKey),
        body: { url: receiver.url, events: ['status.updated'] },
      });
    expect((await add()).status).toBe(201);
    expect((await add()).status).toBe(201);
    const third = await add();
    expect(third).toMatchObject({
      status: 409,
      body: { error: 'conflict', message: expect.stringContaining('already has 2 webhook endpoints') },
    });
  });
});

describe('GET /v1/webhook_endpoints', () => {
  it("lists the issuer's endpoints of the key's mode, oldest first, a page at a time", async () => {
    const lister = await h.createIssuer('Lister');
    const listKey = (await h.createKey(lister)).key;
    const ids = [(await created({}, listKey)).id, (await created({}, listKey)).id, (await created({}, listKey)).id];
    await created({}, (await h.createKey(lister, { mode: 'test' })).key);
    const first = await call('GET', '/v1/webhook_endpoints?limit=2', undefined, listKey);
    expect(first.status).toBe(200);
    expect(first.body.data.map((e: { id: string }) => e.id)).toEqual(ids.slice(0, 2));
    const second = await call('GET', `/v1/webhook_endpoints?limit=2&cursor=${first.body.next_cursor}`, undefined, listKey);
    expect(second.body).toEqual({ data: [expect.objectContaining({ id: ids[2] })], next_cursor: null });
  });

  it('returns 400 for a cursor it did not make, and 403 without webhooks:read', async () => {
    expect((await call('GET', '/v1/webhook_endpoints?cursor=abc')).status).toBe(400);
    // Tampered into a day that does not exist (Feb 30): once a 500 from Postgres.
    const tampered = Buffer.from('2026-02-30T10:00:00.000000Z|whe_0123456789abcdef').toString('base64url');
    expect(await call('GET', `/v1/webhook_endpoints?cursor=${tampered}`)).toMatchObject({ status: 400, body: { error: 'bad_request' } });
    expect((await call('GET', '/v1/webhook_endpoints?limit=2&limit=3')).status).toBe(400);
    expect((await call('GET', '/v1/webhook_endpoints', undefined, statusOnlyKey)).status).toBe(403);
    expect((await call('GET', '/v1/webhook_endpoints', undefined, readOnlyKey)).status).toBe(200);
  });
});

describe('one endpoint', () => {
  it("answers 404 for another issuer's or the other mode's endpoint, on every route", async () => {
    const mine = await created();
    for (const otherwise of [otherKey, testKey]) {
      for (const [method, path, body] of [
        ['GET', '', undefined],
        ['PATCH', '', { description: 'x' }],
        ['DELETE', '', undefined],
        ['POST', '/rotate_secret', {}],
        ['POST', '/test', {}],
        ['POST', '/replay', { event_ids: ['evt_0000000000000000'] }],
      ] as const) {
        const response = await call(method, `/v1/webhook_endpoints/${mine.id}${path}`, body, otherwise);
        expect([method, path, response.status, response.body.error]).toEqual([method, path, 404, 'not_found']);
      }
    }
  });

  it('returns 400 for an id that is not an endpoint id, before the scope', async () => {
    const response = await call('GET', '/v1/webhook_endpoints/nope', undefined, statusOnlyKey);
    expect(response.status).toBe(400);
    expect(response.body.message).toMatch(/^webhook_endpoint_id: /);
  });

  it('PATCH changes only the fields sent, masks replaced headers and disables with reason manual', async () => {
    const endpoint = await created({ description: 'before', rate_limit: 3 });
    const response = await call('PATCH', `/v1/webhook_endpoints/${endpoint.id}`, {
      events: ['delivery.exception'],
      description: null,
      headers: { 'X-Gateway-Key': 'k-1234567890abcdefgh' },
      disabled: true,
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      ...endpoint,
      secret: undefined,
      events: ['delivery.exception'],
      description: null,
      headers: { 'X-Gateway-Key': '****efgh' },
      disabled: true,
      disabled_reason: 'manual',
      disabled_at: expect.any(String),
      rate_limit: 3,
    });
    const enabled = await call('PATCH', `/v1/webhook_endpoints/${endpoint.id}`, { disabled: false, rate_limit: null });
    expect(enabled.body).toMatchObject({ disabled: false, disabled_reason: null, rate_limit: null, description: null });
  });

  it('PATCH with an empty body changes nothing; an unknown field is 400', async () => {
    const endpoint = await created();
    expect((await call('PATCH', `/v1/webhook_endpoints/${endpoint.id}`, {})).body).toEqual({ ...endpoint, secret: undefined });
    const bad = await call('PATCH', `/v1/webhook_endpoints/${endpoint.id}`, { mode: 'test' });
    expect(bad.status).toBe(400);
    for (const change of [{ description: 'ops\u0000' }, { url: `${receiver.url}?\u0000` }]) {
      const refused = await call('PATCH', `/v1/webhook_endpoints/${endpoint.id}`, change);
      expect(refused).toMatchObject({
        status: 400,
        body: { error: 'bad_request', message: expect.stringMatching(/^(description|url): /) },
      });
    }
  });

  it('DELETE removes it: no longer read or listed', async () => {
    const endpoint = await created();
    const response = await call('DELETE', `/v1/webhook_endpoints/${endpoint.id}`);
    expect(response.body).toEqual({ id: endpoint.id, deleted: true });
    expect((await call('GET', `/v1/webhook_endpoints/${endpoint.id}`)).status).toBe(404);
    expect((await call('DELETE', `/v1/webhook_endpoints/${endpoint.id}`)).status).toBe(404);
  });
});

describe('POST /v1/webhook_endpoints/{id}/test', () => {
  it('delivers a signed test event with the nil UUID as dispatch id and the custom headers, which the log does not record', async () => {
    const endpoint = await created({ headers: { Authorization: `Bearer ${GATEWAY_TOKEN}`, 'X-Tenant': 'acme' } });
    const response = await call('POST', `/v1/webhook_endpoints/${endpoint.id}/test`, { type: 'delivery.completed' });
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({ type: 'delivery.completed', dispatch_id: TEST_EVENT_DISPATCH_ID });
    const received = await until(
      () => receiver.requests.find((r) => r.headers['x-service-event-id'] === response.body.id),
      'the test event at the receiver',
    );
    expect(received.headers.authorization).toBe(`Bearer ${GATEWAY_TOKEN}`);
    expect(received.headers['x-tenant']).toBe('acme');
    expect(received.headers['content-type']).toBe('application/json');
    expect(verify(received.body, String(received.headers['x-service-signature']), endpoint.secret)).toBe(true);
    expect(JSON.parse(received.body.toString('utf8')).data.id).toBe(TEST_EVENT_DISPATCH_ID);

    const recorded = await until(async () => {
      const { rows } = await h.pool.query('SELECT request_headers FROM delivery_attempts WHERE event_id = $1', [response.body.id]);
      return rows[0];
    }, 'the recorded attempt');
    expect(JSON.stringify(recorded.request_headers)).not.toContain(GATEWAY_TOKEN);
    expect(JSON.stringify(recorded.request_headers)).not.toContain('acme');
  });

  it('returns 400 naming type for an event the endpoint does not subscribe to, and 409 when it is disabled', async () => {
    const endpoint = await created({ events: ['status.updated'] });
    const unsubscribed = await call('POST', `/v1/webhook_endpoints/${endpoint.id}/test`, { type: 'delivery.exception' });
    expect(unsubscribed.status).toBe(400);
    expect(unsubscribed.body.message).toMatch(/^type: /);
    await call('PATCH', `/v1/webhook_endpoints/${endpoint.id}`, { disabled: true });
    expect((await call('POST', `/v1/webhook_endpoints/${endpoint.id}/test`)).status).toBe(409);
  });

  it('needs webhooks:write', async () => {
    const endpoint = await created();
    expect((await call('POST', `/v1/webhook_endpoints/${endpoint.id}/test`, {}, readOnlyKey)).status).toBe(403);
  });

  it('answers 503 and leaves nothing to deliver when the workflow cannot be started (a retry would otherwise send two)', async () => {
    const endpoint = await created();
    // A frontend nobody listens on, without the client's retry interceptor: every start fails at once, UNAVAILABLE.
    const connection = Connection.lazy({ address: '127.0.0.1:1', interceptors: [] });
    const api = await startApi({ config: h.config, pool: h.pool, temporal: new Client({ connection }), logger: pino({ level: 'silent' }), port: 0, host: '127.0.0.1' }); // prettier-ignore
    try {
      const response = await request(api.url, `/v1/webhook_endpoints/${endpoint.id}/test`, {
        method: 'POST',
        headers: bearer(key),
        body: {},
      });
      expect(response.status).toBe(503);
      expect(response.body.error).toBe('service_unavailable');
    } finally {
      await api.close();
      await connection.close();
    }
    const { rows } = await h.pool.query(
      `SELECT (SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1)::int AS deliveries,
              (SELECT count(*) FROM webhook_events ev WHERE ev.test_event AND ev.issuer_id = $2
                  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = ev.id))::int AS events_without_delivery`,
      [endpoint.id, issuer],
    );
    expect(rows[0]).toEqual({ deliveries: 0, events_without_delivery: 0 });
  });
});

describe('POST /v1/webhook_endpoints/{id}/rotate_secret', () => {
  it('answers a new secret that signs X-Service-Signature at once, while webhook-signature carries both', async () => {
    const endpoint = await created();
    const rotated = await call('POST', `/v1/webhook_endpoints/${endpoint.id}/rotate_secret`, { overlap_seconds: 3600 });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    expect(Date.parse(rotated.body.previous_secret_expires_at) - Date.now()).toBeGreaterThan(3500_000);
    expect((await call('GET', `/v1/webhook_endpoints/${endpoint.id}`)).body.secret).toBeUndefined();

    const test = await call('POST', `/v1/webhook_endpoints/${endpoint.id}/test`);
    const received = await until(() => receiver.requests.find((r) => r.headers['x-service-event-id'] === test.body.id), 'the test event');
    const signature = String(received.headers['x-service-signature']);
    expect(verify(received.body, signature, rotated.body.secret)).toBe(true);
    expect(verify(received.body, signature, endpoint.secret)).toBe(false);
    expect(String(received.headers['webhook-signature']).split(' ')).toHaveLength(2);
    // A consumer still on the old secret verifies the Standard Webhooks signature during the overlap.
    expect(verifyStandard(received.body, received.headers as Record<string, string>, endpoint.secret).ok).toBe(true);
    expect(verifyStandard(received.body, received.headers as Record<string, string>, rotated.body.secret).ok).toBe(true);
  });

  it('returns 400 naming overlap_seconds beyond 30 days', async () => {
    const endpoint = await created();
    const response = await call('POST', `/v1/webhook_endpoints/${endpoint.id}/rotate_secret`, { overlap_seconds: 31 * 86_400 });
    expect(response.status).toBe(400);
    expect(response.body.message).toMatch(/^overlap_seconds: /);
  });
});

describe('custom header values in the logs', () => {
  it('are never written by the API, even at trace level, whatever the request does with them', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString('utf8')), done()) });
    const api = await startApi({ config: h.config, pool: h.pool, temporal: h.temporal, logger: pino({ level: 'trace' }, sink), port: 0, host: '127.0.0.1' }); // prettier-ignore
    const secretValue = 'logged-never-9f8e7d6c5b4a';
    const send = (method: string, path: string, body?: unknown) => request(api.url, path, { method, headers: bearer(key), body });
    try {
      const endpoint = await send('POST', '/v1/webhook_endpoints', { url: receiver.url, events: ['status.updated'], headers: { 'X-Gateway': secretValue } }); // prettier-ignore
      expect(endpoint.status).toBe(201);
      await send('GET', `/v1/webhook_endpoints/${endpoint.body.id}`);
      await send('PATCH', `/v1/webhook_endpoints/${endpoint.body.id}`, { headers: { 'X-Gateway': `${secretValue}-2` } });
      expect((await send('PATCH', `/v1/webhook_endpoints/${endpoint.body.id}`, { headers: { Host: secretValue } })).status).toBe(400);
      expect((await send('POST', '/v1/webhook_endpoints', { url: 'ftp://x', events: ['status.updated'], headers: { 'X-Gateway': secretValue } })).status).toBe(400); // prettier-ignore
      await send('POST', `/v1/webhook_endpoints/${endpoint.body.id}/test`);
    } finally {
      await api.close();
    }
    expect(lines.length).toBeGreaterThan(5);
    expect(lines.join('')).not.toContain(secretValue);
  });
});
