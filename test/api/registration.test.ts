// POST /v1/dispatches (docs/http-contract.md): 201 + Location, idempotent replay, 409 conflicts, validation.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { statusRecord } from '../../domain/dispatch-schemas.js';
import { startHarness, type Harness } from '../support/harness.js';
import { bearer, registrationFor, request } from './http.js';

let h: Harness;
let key: string;
let otherIssuerKey: string;
let testModeKey: string;

const DAY = 86_400_000;

const register = (body: unknown, withKey = key) => request(h.baseUrl, '/v1/dispatches', { headers: bearer(withKey), body });

beforeAll(async () => {
  h = await startHarness();
  const issuer = await h.createIssuer('Registration Issuer');
  key = (await h.createKey(issuer)).key;
  testModeKey = (await h.createKey(issuer, { mode: 'test' })).key;
  otherIssuerKey = (await h.createKey(await h.createIssuer('Other Issuer'))).key;
});

afterAll(async () => {
  await h?.stop();
});

describe('POST /v1/dispatches', () => {
  it('returns 201 with the status record and a Location header', async () => {
    const id = randomUUID();
    const res = await register(
      registrationFor(id, { locale: 'fr-FR', carrier: 'La Poste', tracking_number: 'LP123', reference: 'card-42' }),
    );
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/v1/status/${id}`);
    expect(statusRecord.safeParse(res.body).success).toBe(true);
    expect(res.body).toMatchObject({ id, status: 'dispatched', destination: { postal_code: '75011', country_code: 'FR' } });
  });

  it('makes the dispatch queryable as soon as the 201 is sent', async () => {
    const id = randomUUID();
    const created = await register(registrationFor(id));
    expect(created.status).toBe(201);
    const res = await request(h.baseUrl, `/v1/status/${id}`, { headers: bearer(key) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created.body);
  });

  it('assigns a UUID v4 when the body has no id', async () => {
    const res = await register({ destination: { postal_code: '10115', country_code: 'de' } });
    expect(res.status).toBe(201);
    expect(res.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(res.headers.location).toBe(`/v1/status/${res.body.id}`);
    expect(res.body.destination.country_code).toBe('DE');
  });

  it('defaults dispatch_date to now', async () => {
    const before = Date.now();
    const res = await register(registrationFor(randomUUID()));
    expect(Date.parse(res.body.dispatch_date)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(res.body.dispatch_date)).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it('returns 200 with the current record when the same body is sent again', async () => {
    const id = randomUUID();
    const body = registrationFor(id, { dispatch_date: new Date(Date.now() - 20 * 86_400_000).toISOString() });
    const first = await register(body);
    expect(first.status).toBe(201);
    const again = await register({ ...body, destination: { country_code: 'FR', postal_code: '75011' } });
    expect(again.status).toBe(200);
    expect(again.headers.location).toBeUndefined();
    expect(again.body).toEqual(first.body);
  });

  it("returns 200 with the current record for the same body once its dispatch_date has aged past 90 days (the bounds are a new dispatch's), 409 for another body", async () => {
    const id = randomUUID();
    const oldest = Date.now() - 90 * DAY + 2_500; // within the bounds for 2.5 s
    const body = registrationFor(id, { dispatch_date: new Date(oldest).toISOString() });
    const first = await register(body);
    expect(first.status).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, oldest + 90 * DAY + 300 - Date.now())));
    const again = await register(body);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect((await register({ ...body, reference: 'another' })).status).toBe(409);
    const anew = await register({ ...body, id: randomUUID() });
    expect([anew.status, anew.body.message]).toEqual([400, expect.stringMatching(/^dispatch_date: /)]);
  });

  it('returns 200 when the same dispatch_date comes written another way (the instant the service answered, another offset), 409 for another instant', async () => {
    const id = randomUUID();
    const instant = new Date(Math.floor(Date.now() / 1000) * 1000 - 3 * 86_400_000);
    const body = registrationFor(id, { dispatch_date: instant.toISOString().replace('.000Z', 'Z') });
    const first = await register(body);
    expect(first.status).toBe(201);
    const paris = new Date(instant.getTime() + 3_600_000).toISOString().replace('.000Z', '+01:00');
    for (const written of [first.body.dispatch_date, paris, instant.toISOString().replace('Z', '+00:00')]) {
      const again = await register({ ...body, dispatch_date: written });
      expect([written, again.status]).toEqual([written, 200]);
      expect(again.body).toEqual(first.body);
    }
    const later = new Date(instant.getTime() + 1000).toISOString();
    expect((await register({ ...body, dispatch_date: later })).status).toBe(409);
  });

  it('returns 200 for concurrent registrations of the same body, exactly one 201', async () => {
    const body = registrationFor(randomUUID());
    const results = await Promise.all([register(body), register(body), register(body)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 201]);
  });

  it('returns 409 when the same id comes with a different body', async () => {
    const id = randomUUID();
    expect((await register(registrationFor(id))).status).toBe(201);
    const res = await register(registrationFor(id, { reference: 'something else' }));
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('conflict');
  });

  it('returns 409 when another issuer registered the id', async () => {
    const id = randomUUID();
    expect((await register(registrationFor(id))).status).toBe(201);
    const res = await register(registrationFor(id), otherIssuerKey);
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('conflict');
  });

  it('returns 409 when a key of the other mode sends an id already registered', async () => {
    const id = randomUUID();
    expect((await register(registrationFor(id))).status).toBe(201);
    expect((await register(registrationFor(id), testModeKey)).status).toBe(409);
  });

  it('registers a test-mode dispatch visible only to test keys', async () => {
    const id = randomUUID();
    expect((await register(registrationFor(id), testModeKey)).status).toBe(201);
    expect((await request(h.baseUrl, `/v1/status/${id}`, { headers: bearer(testModeKey) })).status).toBe(200);
    expect((await request(h.baseUrl, `/v1/status/${id}`, { headers: bearer(key) })).status).toBe(404);
  });
});

describe('POST /v1/dispatches validation', () => {
  it('returns 400 naming destination.country_code when it is not an ISO 3166-1 alpha-2 code', async () => {
    const res = await register(registrationFor(randomUUID(), { destination: { postal_code: '75011', country_code: 'FRA' } }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'bad_request', message: 'destination.country_code: must be an ISO 3166-1 alpha-2 country code' });
  });

  it("returns 400 naming destination.country_code for UK, pointing to GB, the United Kingdom's ISO code (Intl also names UK, which ISO 3166-1 never assigned)", async () => {
    const res = await register(registrationFor(randomUUID(), { destination: { postal_code: 'SW1A 1AA', country_code: 'UK' } }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'bad_request',
      message: 'destination.country_code: must be an assigned ISO 3166-1 alpha-2 country code; for United Kingdom write GB',
    });
  });

  it('returns 400 naming destination.country_code for the aliases and reserved codes CLDR names that ISO 3166-1 assigns to no country', async () => {
    for (const code of ['EU', 'UN', 'EZ', 'QO', 'XA', 'XB', 'SU', 'YU', 'CS', 'DD', 'FX', 'AN', 'TP', 'ZR']) {
      const res = await register(registrationFor(randomUUID(), { destination: { postal_code: '75011', country_code: code } }));
      expect([code, res.status, res.body.message]).toEqual([code, 400, expect.stringMatching(/^destination\.country_code: must be an assigned ISO 3166-1/)]); // prettier-ignore
    }
  });

  it('returns 400 naming destination when it is missing', async () => {
    const res = await register({ id: randomUUID() });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^destination: /);
  });

  it('returns 400 naming id when it is a UUID v1', async () => {
    const res = await register(registrationFor('c232ab00-9414-11ec-b3c8-9f6bdeced846'));
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^id: /);
  });

  it('returns 400 naming dispatch_date when it is not an ISO 8601 timestamp', async () => {
    const res = await register(registrationFor(randomUUID(), { dispatch_date: 'yesterday' }));
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^dispatch_date: /);
  });

  it('returns 400 for an unknown field', async () => {
    const res = await register(registrationFor(randomUUID(), { colour: 'blue' }));
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/colour/);
  });

  it('returns 400 for a body that is not valid JSON', async () => {
    const res = await request(h.baseUrl, '/v1/dispatches', {
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: '{"destination": ',
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('bad_request');
  });

  // JSON that is valid but holds a `__proto__` key is refused (prototype poisoning), saying so: it is
  // not "not valid JSON", and the key may be deep inside a field the schema would have named.
  it('returns 400 saying a key named __proto__ is not accepted, wherever it is', async () => {
    for (const body of ['{"__proto__": {"x": 1}}', '{"destination": {"postal_code": "75011", "__proto__": false}}']) {
      const res = await request(h.baseUrl, '/v1/dispatches', { headers: { ...bearer(key), 'content-type': 'application/json' }, body });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'bad_request', message: 'the request body holds a key named "__proto__", which is not accepted' });
    }
  });

  it('returns 415 for a body that is not declared as application/json', async () => {
    const res = await request(h.baseUrl, '/v1/dispatches', {
      headers: { ...bearer(key), 'content-type': 'text/plain' },
      body: JSON.stringify(registrationFor(randomUUID())),
    });
    expect(res.status).toBe(415);
    expect(res.body.error).toBe('unsupported_media_type');
  });

  it('returns 413 for a body over 1 MB', async () => {
    const res = await register(registrationFor(randomUUID(), { reference: 'x'.repeat(1_100_000) }));
    expect(res.status).toBe(413);
    expect(res.body.error).toBe('payload_too_large');
  });
});
