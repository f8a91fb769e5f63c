// The check order of docs/http-contract.md "Common rules" (401 → 429 → 400 → 404/403) on the routes
// that register, list and move dispatches: a bad path, query, body or Idempotency-Key is answered 400
// naming the field even for a key without the route's scope (or, on the test helpers, a live key);
// a well-formed request from such a key is 403; and the scope is checked before the dispatch is
// looked up (404/403 of access). GET /v1/status/{id}: test/api/status-check-order.test.ts.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startHarness, type Harness } from '../support/harness.js';
import { bearer, registrationFor, request } from './http.js';

let h: Harness;
let fullKey: string;
let fullTestKey: string;
let readOnly: string;
let readOnlyTest: string;
let writeOnly: string;
let otherIssuerTestKey: string;

const post = (path: string, withKey: string, body?: unknown, headers: Record<string, string> = {}) =>
  request(h.baseUrl, path, { method: 'POST', headers: { ...bearer(withKey), ...headers }, body });
const expectBadRequest = (res: { status: number; body: any }, field: RegExp) => {
  expect(res.status).toBe(400);
  expect(res.body).toEqual({ error: 'bad_request', message: expect.stringMatching(field) });
};
const expectForbidden = (res: { status: number; body: any }) => {
  expect(res.status).toBe(403);
  expect(res.body.error).toBe('forbidden');
};

beforeAll(async () => {
  h = await startHarness();
  const issuer = await h.createIssuer('Check Order Issuer');
  fullKey = (await h.createKey(issuer)).key;
  fullTestKey = (await h.createKey(issuer, { mode: 'test' })).key;
  readOnly = (await h.createKey(issuer, { scopes: ['status:read'] })).key;
  readOnlyTest = (await h.createKey(issuer, { scopes: ['status:read'], mode: 'test' })).key;
  writeOnly = (await h.createKey(issuer, { scopes: ['dispatches:write'] })).key;
  otherIssuerTestKey = (await h.createKey(await h.createIssuer('Other Check Order Issuer'), { mode: 'test' })).key;
});

afterAll(async () => {
  await h?.stop();
});

describe('POST /v1/dispatches with a key without dispatches:write', () => {
  it('answers 400 naming the field for a bad body, before 403 for the scope', async () => {
    expectBadRequest(await post('/v1/dispatches', readOnly, { destination: {} }), /^destination\.postal_code: /);
  });

  it('answers 400 for a body that is not JSON, before 403 for the scope', async () => {
    const res = await post('/v1/dispatches', readOnly, '{"destination":', { 'content-type': 'application/json' });
    expect(res.status).toBe(400);
  });

  it('answers 400 naming Idempotency-Key for a bad key, before 403 for the scope', async () => {
    const res = await post('/v1/dispatches', readOnly, registrationFor(randomUUID()), { 'idempotency-key': 'x'.repeat(256) });
    expectBadRequest(res, /^Idempotency-Key: /);
  });

  it('answers 403 for a valid body', async () => {
    expectForbidden(await post('/v1/dispatches', readOnly, registrationFor(randomUUID())));
  });

  it('answers 403, not the replay, for an Idempotency-Key a key of the same issuer used with the same body', async () => {
    const body = registrationFor(randomUUID());
    const headers = { 'idempotency-key': `check-order-${randomUUID()}` };
    expect((await post('/v1/dispatches', fullKey, body, headers)).status).toBe(201);
    const res = await post('/v1/dispatches', readOnly, body, headers);
    expectForbidden(res);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
  });
});

describe('POST /v1/dispatches/batch with a key without dispatches:write', () => {
  it('answers 400 naming dispatches for an empty batch, before 403 for the scope', async () => {
    expectBadRequest(await post('/v1/dispatches/batch', readOnly, { dispatches: [] }), /^dispatches: /);
  });

  it('answers 400 naming Idempotency-Key for a bad key, before 403 for the scope', async () => {
    const res = await post(
      '/v1/dispatches/batch',
      readOnly,
      { dispatches: [registrationFor(randomUUID())] },
      { 'idempotency-key': 'x'.repeat(256) },
    );
    expectBadRequest(res, /^Idempotency-Key: /);
  });

  it('answers 403 for a valid batch, even one whose items are bad', async () => {
    expectForbidden(await post('/v1/dispatches/batch', readOnly, { dispatches: [registrationFor(randomUUID())] }));
    expectForbidden(await post('/v1/dispatches/batch', readOnly, { dispatches: [{ destination: {} }] }));
  });
});

describe('GET /v1/dispatches with a key without status:read', () => {
  it('answers 400 naming limit for ?limit=0, before 403 for the scope', async () => {
    expectBadRequest(await request(h.baseUrl, '/v1/dispatches?limit=0', { headers: bearer(writeOnly) }), /^limit: /);
  });

  it('answers 400 naming an unknown parameter, before 403 for the scope', async () => {
    expectBadRequest(await request(h.baseUrl, '/v1/dispatches?colour=red', { headers: bearer(writeOnly) }), /colour/);
  });

  it('answers 403 for a valid query', async () => {
    expectForbidden(await request(h.baseUrl, '/v1/dispatches?limit=5', { headers: bearer(writeOnly) }));
  });
});

describe('POST /v1/dispatches/{id}/events with a key without events:write', () => {
  const event = () => ({ status: 'in_transit', occurred_at: new Date().toISOString() });

  it('answers 400 naming id for a path id that is not a UUID v4, before 403 for the scope', async () => {
    expectBadRequest(await post('/v1/dispatches/nope/events', readOnly, event()), /^id: /);
  });

  it('answers 400 naming the field for a bad body, before 403 for the scope', async () => {
    expectBadRequest(await post(`/v1/dispatches/${randomUUID()}/events`, readOnly, { status: 'in_transit' }), /^occurred_at: /);
  });

  it('answers 403 for a valid event, before 404 for an unknown dispatch', async () => {
    expectForbidden(await post(`/v1/dispatches/${randomUUID()}/events`, readOnly, event()));
    expect((await post(`/v1/dispatches/${randomUUID()}/events`, fullKey, event())).status).toBe(404);
  });
});

describe('POST /v1/test_helpers/dispatches/{id}/{action}', () => {
  const helper = (id: string, action: string, withKey: string, body?: unknown) =>
    post(`/v1/test_helpers/dispatches/${id}/${action}`, withKey, body);

  it('answers a live key 400 naming id or action for a bad one, before 403 for the live key', async () => {
    expectBadRequest(await helper('nope', 'ship', fullKey), /^id: /);
    expectBadRequest(await helper(randomUUID(), 'teleport', fullKey), /^action: /);
    expectBadRequest(await helper(randomUUID(), 'fail', fullKey, { reason: 'bored' }), /^reason: /);
  });

  it('answers a test key without events:write 400 for a bad id or action, before 403 for the scope', async () => {
    expectBadRequest(await helper('nope', 'ship', readOnlyTest), /^id: /);
    expectBadRequest(await helper(randomUUID(), 'teleport', readOnlyTest), /^action: /);
  });

  it('answers 403 for a well-formed request from a live key or a test key without events:write, before 404', async () => {
    expectForbidden(await helper(randomUUID(), 'ship', fullKey));
    expectForbidden(await helper(randomUUID(), 'ship', readOnlyTest));
    expect((await helper(randomUUID(), 'ship', fullTestKey)).status).toBe(404);
  });

  it("answers 400 for a bad body on another issuer's dispatch, before its 403", async () => {
    const id = randomUUID();
    expect((await post('/v1/dispatches', fullTestKey, registrationFor(id))).status).toBe(201);
    expectBadRequest(await helper(id, 'fail', otherIssuerTestKey, { reason: 'bored' }), /^reason: /);
    expectForbidden(await helper(id, 'fail', otherIssuerTestKey, { reason: 'lost' }));
  });
});
