// GET /v1/status/{id} (docs/http-contract.md "GET /v1/status/{id}"), against a real worker, Temporal and Postgres.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { statusRecord } from '../../domain/dispatch-schemas.js';
import { startHarness, type Harness } from '../support/harness.js';
import { bearer, registrationFor, request } from './http.js';

const UUID_V1 = 'c232ab00-9414-11ec-b3c8-9f6bdeced846';
const UUID_V7 = '01890a5d-ac96-774b-bcce-b302099a8057';

let h: Harness;
let key: string;
let otherIssuerKey: string;
let testModeKey: string;
let dispatchId: string;

// Four days ago at 08:30 UTC (within the time bounds of docs/http-contract.md "Input bounds and integrity promises"), written with a +01:00 offset.
const dispatchDate = new Date(Math.floor(Date.now() / 86_400_000 - 4) * 86_400_000 + 8.5 * 3_600_000).toISOString();
const dispatchDateWithOffset = `${dispatchDate.slice(0, 11)}09:30:00+01:00`;

beforeAll(async () => {
  h = await startHarness();
  const issuer = await h.createIssuer('Status Issuer');
  key = (await h.createKey(issuer)).key;
  testModeKey = (await h.createKey(issuer, { mode: 'test' })).key;
  otherIssuerKey = (await h.createKey(await h.createIssuer('Other Issuer'))).key;
  dispatchId = randomUUID();
  const created = await request(h.baseUrl, '/v1/dispatches', {
    headers: bearer(key),
    body: registrationFor(dispatchId, { dispatch_date: dispatchDateWithOffset, locale: 'en-GB' }),
  });
  expect(created.status).toBe(201);
});

afterAll(async () => {
  await h?.stop();
});

describe('GET /v1/status/{id}', () => {
  it('returns 200 with exactly the contract fields in their formats', async () => {
    const res = await request(h.baseUrl, `/v1/status/${dispatchId}`, { headers: bearer(key) });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(statusRecord.safeParse(res.body).success).toBe(true);
    expect(Object.keys(res.body).sort()).toEqual(['destination', 'dispatch_date', 'id', 'prediction', 'status', 'ui_suggestion']);
    expect(res.body).toMatchObject({
      id: dispatchId,
      status: 'dispatched',
      dispatch_date: dispatchDate,
      destination: { postal_code: '75011', country_code: 'FR' },
      ui_suggestion: { recommended_action: 'None' },
    });
    expect(res.body.prediction.delivery_window.min).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(res.body.prediction.delivery_window.max).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(['High', 'Medium', 'Low']).toContain(res.body.prediction.confidence_level);
  });

  it('accepts the id in upper case', async () => {
    const res = await request(h.baseUrl, `/v1/status/${dispatchId.toUpperCase()}`, { headers: bearer(key) });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(dispatchId);
  });

  it('returns 400 when id is not a UUID', async () => {
    const res = await request(h.baseUrl, '/v1/status/not-a-uuid', { headers: bearer(key) });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'bad_request', message: expect.stringContaining('id') });
  });

  it('returns 400 when id is a UUID v1', async () => {
    const res = await request(h.baseUrl, `/v1/status/${UUID_V1}`, { headers: bearer(key) });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('bad_request');
  });

  it('returns 400 when id is a UUID v7', async () => {
    const res = await request(h.baseUrl, `/v1/status/${UUID_V7}`, { headers: bearer(key) });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('bad_request');
  });

  it('returns 404 for an unknown id, saying a new dispatch may take up to 60 seconds', async () => {
    const res = await request(h.baseUrl, `/v1/status/${randomUUID()}`, { headers: bearer(key) });
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('not_found');
    expect(res.body.message).toMatch(/60 seconds/);
  });

  it("returns 403 for another issuer's dispatch", async () => {
    const res = await request(h.baseUrl, `/v1/status/${dispatchId}`, { headers: bearer(otherIssuerKey) });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
  });

  it('returns 404 to a test-mode key for a live dispatch', async () => {
    const res = await request(h.baseUrl, `/v1/status/${dispatchId}`, { headers: bearer(testModeKey) });
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('not_found');
  });

  it('renders ui_suggestion in the language of ?locale=fr', async () => {
    const res = await request(h.baseUrl, `/v1/status/${dispatchId}?locale=fr`, { headers: bearer(key) });
    expect(res.status).toBe(200);
    expect(res.body.ui_suggestion.locale).toMatch(/^fr\b/);
    const english = await request(h.baseUrl, `/v1/status/${dispatchId}`, { headers: bearer(key) });
    expect(res.body.ui_suggestion.recommended_message).not.toBe(english.body.ui_suggestion.recommended_message);
    expect({ ...res.body, ui_suggestion: undefined }).toEqual({ ...english.body, ui_suggestion: undefined });
  });

  it('returns 400 naming locale when ?locale= is not a BCP 47 tag', async () => {
    const res = await request(h.baseUrl, `/v1/status/${dispatchId}?locale=not_a_locale!`, { headers: bearer(key) });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^locale: /);
  });

  it('ignores unknown query parameters', async () => {
    const res = await request(h.baseUrl, `/v1/status/${dispatchId}?expand=everything&foo=1`, { headers: bearer(key) });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(dispatchId);
  });

  it('answers JSON even when the client asks for another type', async () => {
    const res = await request(h.baseUrl, `/v1/status/${dispatchId}`, { headers: { ...bearer(key), accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
  });

  it('answers the same from the fast path as from the Koa route (same body, same headers, counted once)', async () => {
    // A plain read is served by api/fast-status.ts; with a query string it goes through Koa.
    const fast = await request(h.baseUrl, `/v1/status/${dispatchId}`, { headers: bearer(key) });
    const koa = await request(h.baseUrl, `/v1/status/${dispatchId}?via=koa`, { headers: bearer(key) });
    expect(fast.status).toBe(200);
    expect(koa.status).toBe(200);
    expect(fast.text).toBe(koa.text);
    for (const header of ['content-type', 'x-ratelimit-limit']) expect(fast.headers[header]).toBe(koa.headers[header]);
    expect(fast.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    // Within one window, the second request has exactly one fewer remaining (unless a minute turned between them).
    if (fast.headers['x-ratelimit-reset'] === koa.headers['x-ratelimit-reset']) {
      expect(Number(fast.headers['x-ratelimit-remaining']) - Number(koa.headers['x-ratelimit-remaining'])).toBe(1);
    }
  });
});
