// POST /v1/dispatches/batch (docs/http-contract.md): each item behaves exactly as POST /v1/dispatches
// (validation, idempotency, conflicts), results come back in input order, one bad item never
// fails the others; 1–1,000 items, 413 past the body limit; each item counts against the rate limit.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startHarness, type Harness } from '../support/harness.js';
import { bearer, registrationFor, request } from './http.js';

let h: Harness;
let issuer: string;
let key: string;
let testKey: string;
let otherIssuerKey: string;

const batch = (body: unknown, withKey = key, baseUrl = h.baseUrl) =>
  request(baseUrl, '/v1/dispatches/batch', { headers: bearer(withKey), body });
const status = (id: string, withKey = key) => request(h.baseUrl, `/v1/status/${id}`, { headers: bearer(withKey) });

beforeAll(async () => {
  h = await startHarness();
  issuer = await h.createIssuer('Batch Issuer');
  key = (await h.createKey(issuer)).key;
  testKey = (await h.createKey(issuer, { mode: 'test' })).key;
  otherIssuerKey = (await h.createKey(await h.createIssuer('Other Issuer'))).key;
});

afterAll(async () => {
  await h?.stop();
});

describe('POST /v1/dispatches/batch', () => {
  it('reports each item of a mixed batch at its index; the bad items do not fail the good ones', async () => {
    const good = randomUUID();
    const badCountry = randomUUID();
    const res = await batch({
      dispatches: [
        registrationFor(good),
        registrationFor(badCountry, { destination: { postal_code: '75011', country_code: 'XX' } }),
        { destination: { postal_code: '10115', country_code: 'DE' } },
        { id: 'not-a-uuid', destination: { postal_code: '75011', country_code: 'FR' } },
        'not an object',
      ],
    });
    expect(res.status).toBe(200);
    const [first, second, third, fourth, fifth] = res.body.results;
    expect(first).toEqual({ index: 0, result: 'created', id: good });
    expect(second).toEqual({ index: 1, result: 'error', id: badCountry, error: { error: 'bad_request', message: expect.stringMatching(/^destination\.country_code: /) } }); // prettier-ignore
    expect(third).toEqual({ index: 2, result: 'created', id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(fourth).toEqual({ index: 3, result: 'error', error: { error: 'bad_request', message: expect.stringMatching(/^id: /) } });
    expect(fifth).toMatchObject({ index: 4, result: 'error', error: { error: 'bad_request' } });
    expect((await status(good)).status).toBe(200);
    expect((await status(third.id)).body.destination).toEqual({ postal_code: '10115', country_code: 'DE' });
  });

  it('gives a bad item its id when it sent a valid one (lower-cased), and none when its id is not a UUID v4', async () => {
    const id = randomUUID();
    const badDestination = { postal_code: '1', country_code: 'XX' };
    const res = await batch({
      dispatches: [
        { id, destination: badDestination },
        { id: id.toUpperCase().replace(/^./, 'B'), destination: badDestination },
        { id: 'not-a-uuid', destination: badDestination },
        { id: 'a0b1c2d3-e4f5-11ee-8c90-0242ac120002', destination: badDestination },
        { id: 42, destination: badDestination },
        [id],
      ],
    });
    expect(res.status).toBe(200);
    const error = { error: 'bad_request', message: expect.any(String) };
    expect(res.body.results).toEqual([
      { index: 0, result: 'error', id, error },
      { index: 1, result: 'error', id: id.replace(/^./, 'b'), error },
      { index: 2, result: 'error', error },
      { index: 3, result: 'error', error },
      { index: 4, result: 'error', error },
      { index: 5, result: 'error', error },
    ]);
  });

  it('answers an item registered before with the same body as existing', async () => {
    const id = randomUUID();
    expect((await batch({ dispatches: [registrationFor(id)] })).body.results).toEqual([{ index: 0, result: 'created', id }]);
    const again = await batch({ dispatches: [registrationFor(id), registrationFor(randomUUID())] });
    expect(again.body.results[0]).toEqual({ index: 0, result: 'existing', id });
    expect(again.body.results[1].result).toBe('created');
  });

  it("answers an item registered before with the same body as existing once its dispatch_date has aged past 90 days (the bounds are a new dispatch's)", async () => {
    const id = randomUUID();
    const oldest = Date.now() - 90 * 86_400_000 + 2_500; // within the bounds for 2.5 s
    const item = registrationFor(id, { dispatch_date: new Date(oldest).toISOString() });
    expect((await batch({ dispatches: [item] })).body.results).toEqual([{ index: 0, result: 'created', id }]);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, oldest + 90 * 86_400_000 + 300 - Date.now())));
    const again = await batch({ dispatches: [item, { ...item, id: randomUUID() }] });
    expect(again.body.results[0]).toEqual({ index: 0, result: 'existing', id });
    expect(again.body.results[1]).toMatchObject({ result: 'error', error: { error: 'bad_request', message: expect.stringMatching(/^dispatch_date: /) } }); // prettier-ignore
  });

  it('answers an id repeated within one batch once created and once existing', async () => {
    const id = randomUUID();
    const res = await batch({ dispatches: [registrationFor(id), registrationFor(id)] });
    expect(res.body.results.map((r: { result: string }) => r.result).sort()).toEqual(['created', 'existing']);
  });

  it('reports an id registered with a different body as a conflict of that item only', async () => {
    const id = randomUUID();
    expect((await request(h.baseUrl, '/v1/dispatches', { headers: bearer(key), body: registrationFor(id) })).status).toBe(201);
    const res = await batch({ dispatches: [registrationFor(id, { reference: 'other' }), registrationFor(randomUUID())] });
    expect(res.body.results[0]).toEqual({ index: 0, result: 'error', id, error: { error: 'conflict', message: expect.any(String) } });
    expect(res.body.results[1].result).toBe('created');
  });

  it("reports another issuer's id as a conflict", async () => {
    const id = randomUUID();
    expect((await batch({ dispatches: [registrationFor(id)] }, otherIssuerKey)).body.results[0].result).toBe('created');
    expect((await batch({ dispatches: [registrationFor(id)] })).body.results[0]).toMatchObject({ result: 'error', error: { error: 'conflict' } }); // prettier-ignore
  });

  it('registers test-mode dispatches for a test key, invisible to the live key', async () => {
    const id = randomUUID();
    expect((await batch({ dispatches: [registrationFor(id)] }, testKey)).body.results[0].result).toBe('created');
    expect((await status(id, testKey)).status).toBe(200);
    expect((await status(id)).status).toBe(404);
  });

  it('accepts exactly 1,000 items', async () => {
    // Invalid items keep this fast: each still gets its own result. A fresh key, as they all count.
    const ownKey = (await h.createKey(issuer)).key;
    const items = Array.from({ length: 1000 }, () => ({ destination: { postal_code: '75011' } }));
    const res = await batch({ dispatches: items }, ownKey);
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(1000);
    expect(res.body.results.every((r: { index: number; result: string }, i: number) => r.index === i && r.result === 'error')).toBe(true);
  });

  it('returns 400 naming dispatches for more than 1,000 items', async () => {
    const res = await batch({ dispatches: Array.from({ length: 1001 }, () => registrationFor(randomUUID())) });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'bad_request', message: expect.stringMatching(/^dispatches: /) });
  });

  it('returns 400 naming dispatches for an empty batch', async () => {
    const res = await batch({ dispatches: [] });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^dispatches: /);
  });

  it('returns 400 for a body without dispatches', async () => {
    const res = await batch([registrationFor(randomUUID())]);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('bad_request');
  });

  // The largest batch the contract allows: 1,000 items whose every text field is at its length limit
  // in characters outside the Basic Multilingual Plane, written as Python's json.dumps (and the
  // `requests` library's json=) writes them by default: every such character as a \uXXXX\uXXXX
  // pair, twelve bytes. Its country code is one no item may have, so that each item is refused at
  // once (its size is that of a valid one): what is tested is that the body is read at all.
  const longest = (length: number) => '𝒞'.repeat(length);
  const maximalItem = (countryCode: string) => ({
    id: randomUUID(),
    dispatch_date: '2026-12-07T10:00:00.123456789+05:30',
    destination: { postal_code: longest(16), country_code: countryCode },
    locale: 'zh-Hant-TW-u-ca-chinese-co-pinyin',
    carrier: longest(100),
    tracking_number: longest(100),
    reference: longest(200),
  });
  const asPythonWritesIt = (body: unknown) =>
    JSON.stringify(body, null, 2).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

  it('reads the largest batch the contract allows, every field at its limit, ASCII-escaped and indented as Python writes it', async () => {
    const ownKey = (await h.createKey(issuer)).key;
    const body = asPythonWritesIt({ dispatches: Array.from({ length: 1000 }, () => maximalItem('ZZ')) });
    expect(Buffer.byteLength(body)).toBeGreaterThan(5_000_000);
    const res = await request(h.baseUrl, '/v1/dispatches/batch', { headers: { ...bearer(ownKey), 'content-type': 'application/json' }, body }); // prettier-ignore
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(1000);
    expect(res.body.results[999]).toMatchObject({ index: 999, result: 'error', error: { message: expect.stringMatching(/^destination\.country_code: /) } }); // prettier-ignore
  });

  it('answers one item over it, written the same way, with 400 naming dispatches (not 413, which would not say why)', async () => {
    const body = asPythonWritesIt({ dispatches: Array.from({ length: 1001 }, () => maximalItem('FR')) });
    const res = await request(h.baseUrl, '/v1/dispatches/batch', { headers: { ...bearer(key), 'content-type': 'application/json' }, body }); // prettier-ignore
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'bad_request', message: expect.stringMatching(/^dispatches: .*1000/) });
  });

  it('returns 413 payload_too_large for a body past the limit, 6 MB', async () => {
    const item = registrationFor(randomUUID(), { reference: 'x'.repeat(200) });
    const body = JSON.stringify({ dispatches: Array.from({ length: 30_000 }, () => item) });
    const res = await request(h.baseUrl, '/v1/dispatches/batch', { headers: { ...bearer(key), 'content-type': 'application/json' }, body });
    expect(res.status).toBe(413);
    expect(res.body.error).toBe('payload_too_large');
  });

  it('returns 403 to a key without dispatches:write', async () => {
    const readOnly = (await h.createKey(issuer, { scopes: ['status:read'] })).key;
    expect((await batch({ dispatches: [registrationFor(randomUUID())] }, readOnly)).status).toBe(403);
  });
});

describe('POST /v1/dispatches/batch and the rate limit', () => {
  const LIMIT = 5;
  // An API process with a small limit, on the same database (the harness stops it).
  let limited: { baseUrl: string };

  beforeAll(async () => {
    limited = await h.startExtraApi({ RATE_LIMIT_PER_MINUTE: String(LIMIT) });
    // The requests of a test must fall in one window: start none in a minute's last 8 seconds.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 52_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 100));
  }, 15_000);

  it('counts each item; items past the window are not attempted and report rate_limit_exceeded', async () => {
    const ownKey = (await h.createKey(issuer)).key;
    const ids = Array.from({ length: 7 }, () => randomUUID());
    const res = await batch({ dispatches: ids.map((id) => registrationFor(id)) }, ownKey, limited.baseUrl);
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { result: string }) => r.result)).toEqual(['created', 'created', 'created', 'created', 'created', 'error', 'error']); // prettier-ignore
    expect(res.body.results[6].error.error).toBe('rate_limit_exceeded');
    expect(res.headers['x-ratelimit-remaining']).toBe('0');
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await status(ids[5])).status).toBe(404);
    const next = await request(limited.baseUrl, `/v1/status/${ids[0]}`, { headers: bearer(ownKey) });
    expect(next.status).toBe(429);
  });
});
