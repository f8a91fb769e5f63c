// What the edge refuses (docs/http-contract.md "Input bounds and integrity promises"): a dispatch_date or an
// occurred_at outside its bounds, a timestamp whose offset Postgres cannot take, a control character or
// half a surrogate pair alone in a string field. Each is a 400 `bad_request` naming the field, answered at once, never a 500 or a
// registration that waits on a wedged workflow.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startHarness, type Harness } from '../support/harness.js';
import { bearer, registrationFor, request } from './http.js';

let h: Harness;
let key: string;

const DAY = 86_400_000;
const HOUR = 3_600_000;
const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();

const register = (body: unknown) => request(h.baseUrl, '/v1/dispatches', { headers: bearer(key), body });
const postEvent = (id: string, body: unknown) => request(h.baseUrl, `/v1/dispatches/${id}/events`, { headers: bearer(key), body });

async function registered(dispatchDate: string): Promise<string> {
  const id = randomUUID();
  const res = await register(registrationFor(id, { dispatch_date: dispatchDate }));
  expect(res.status).toBe(201);
  return id;
}

beforeAll(async () => {
  h = await startHarness();
  key = (await h.createKey(await h.createIssuer('Bounds Issuer'))).key;
});

afterAll(async () => {
  await h?.stop();
});

describe('dispatch_date must lie within [now − 90 days, now + 1 day]', () => {
  it.each([
    ['in year 9999 (it wedged a workflow)', '9999-12-30T00:00:00Z'],
    ['two days ahead', at(2 * DAY)],
    ['91 days ago', at(-91 * DAY)],
  ])('refuses a dispatch_date %s with 400 naming dispatch_date', async (_, dispatchDate) => {
    const res = await register(registrationFor(randomUUID(), { dispatch_date: dispatchDate }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'bad_request', message: expect.stringMatching(/^dispatch_date: .*90 days.*1 day/) });
  });

  it.each([
    ['89 days ago', at(-89 * DAY)],
    ['23 hours ahead', at(23 * 3_600_000)],
  ])('accepts a dispatch_date %s', async (_, dispatchDate) => {
    const res = await register(registrationFor(randomUUID(), { dispatch_date: dispatchDate }));
    expect(res.status).toBe(201);
  });

  it('refuses an out-of-bounds batch item with bad_request naming dispatch_date, and one holding half a surrogate pair naming reference, and registers the others', async () => {
    const halfPair = registrationFor(randomUUID(), { reference: 'a\ud83c' });
    const res = await request(h.baseUrl, '/v1/dispatches/batch', {
      headers: bearer(key),
      body: {
        dispatches: [registrationFor(randomUUID(), { dispatch_date: '9999-12-30T00:00:00Z' }), registrationFor(randomUUID()), halfPair],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.results[0]).toMatchObject({ result: 'error', error: { error: 'bad_request', message: expect.stringMatching(/^dispatch_date: /) } }); // prettier-ignore
    expect(res.body.results[1].result).toBe('created');
    expect(res.body.results[2]).toMatchObject({ result: 'error', error: { error: 'bad_request', message: expect.stringMatching(/^reference: must not contain unpaired surrogates/) } }); // prettier-ignore
  });
});

describe("a carrier event's occurred_at must lie within [dispatch_date − 7 days, now + 15 minutes]", () => {
  let id: string;
  let dispatchDate: string;

  beforeAll(async () => {
    dispatchDate = at(-10 * DAY);
    id = await registered(dispatchDate);
  });

  it('refuses an occurred_at in 2099 (it froze the card) with 400 naming occurred_at, and records nothing', async () => {
    const res = await postEvent(id, { status: 'in_transit', occurred_at: '2099-01-01T00:00:00Z' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'bad_request', message: expect.stringMatching(/^occurred_at: .*15 minutes/) });
    const { rows } = await h.pool.query('SELECT 1 FROM carrier_events WHERE dispatch_id = $1', [id]);
    expect(rows).toEqual([]);
  });

  it('refuses an occurred_at 20 minutes ahead', async () => {
    const res = await postEvent(id, { status: 'in_transit', occurred_at: at(20 * 60_000) });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^occurred_at: /);
  });

  it('refuses an occurred_at more than 7 days before the dispatch date', async () => {
    const res = await postEvent(id, { status: 'in_transit', occurred_at: new Date(Date.parse(dispatchDate) - 8 * DAY).toISOString() });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^occurred_at: .*7 days/);
  });

  it('accepts an occurred_at 6 days before the dispatch date, and one 10 minutes ahead', async () => {
    expect((await postEvent(id, { status: 'in_transit', occurred_at: new Date(Date.parse(dispatchDate) - 6 * DAY).toISOString() })).status).toBe(202); // prettier-ignore
    expect((await postEvent(id, { status: 'out_for_delivery', occurred_at: at(10 * 60_000) })).status).toBe(202);
  });

  it('checks the dispatch first: an unknown dispatch is 404 whatever its occurred_at', async () => {
    const res = await postEvent(randomUUID(), { status: 'in_transit', occurred_at: '2099-01-01T00:00:00Z' });
    expect(res.status).toBe(404);
  });
});

describe('what fuzzing found', () => {
  it('refuses "occurred_at":"0519-06-17T20:40:40.791786+21:27" with 400, not 500', async () => {
    const id = await registered(at(-DAY));
    const res = await postEvent(id, { status: 'in_transit', occurred_at: '0519-06-17T20:40:40.791786+21:27' });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^occurred_at: /);
  });

  it('takes an in-bounds occurred_at written with a +20:00 offset (beyond what Postgres takes), as the instant it names', async () => {
    const id = await registered(at(-DAY));
    const instant = new Date(Math.floor((Date.now() - 3_600_000) / 1000) * 1000);
    const wallClock = new Date(instant.getTime() + 20 * 3_600_000).toISOString().slice(0, 19);
    const res = await postEvent(id, { status: 'in_transit', occurred_at: `${wallClock}+20:00`, event_id: 'offset-20' });
    expect(res.status).toBe(202);
    const { rows } = await h.pool.query('SELECT occurred_at FROM carrier_events WHERE dispatch_id = $1', [id]);
    expect(rows.map((row) => row.occurred_at.toISOString())).toEqual([instant.toISOString()]);
  });

  it('lists with created_before=1979-04-02T23:30:47.23-19:47&country_code=Ga: 200 and an empty page, not 500', async () => {
    const res = await request(
      h.baseUrl,
      `/v1/dispatches?created_before=${encodeURIComponent('1979-04-02T23:30:47.23-19:47')}&country_code=Ga`,
      {
        headers: bearer(key),
      },
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [], next_cursor: null });
  });

  it('takes created_after with any offset RFC 3339 allows, and filters by the instant it names', async () => {
    const id = await registered(at(-DAY));
    // 23:59 ahead of UTC: the instant is almost a day earlier than its wall-clock reading.
    const wallClock = new Date(Date.now() + DAY - 3_600_000).toISOString().slice(0, 19);
    const res = await request(h.baseUrl, `/v1/dispatches?limit=100&created_after=${encodeURIComponent(`${wallClock}+23:59`)}`, {
      headers: bearer(key),
    });
    expect(res.status).toBe(200);
    expect(res.body.data.map((record: { id: string }) => record.id)).toContain(id);
  });

  it('refuses a tracking_number holding a NUL character with 400 naming it, at once (it wedged a workflow)', async () => {
    const res = await register(registrationFor(randomUUID(), { tracking_number: 'AB\u0000CD' }));
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^tracking_number: .*control character/);
  });

  it.each([
    ['destination.postal_code', { destination: { postal_code: '750\u000111', country_code: 'FR' } }],
    ['carrier', { carrier: 'La\u0007Poste' }],
    ['reference', { reference: 'ref\u007f' }],
    ['locale', { locale: 'fr\u0000' }],
  ])('refuses a control character in %s', async (field, overrides) => {
    const res = await register(registrationFor(randomUUID(), overrides));
    expect(res.status).toBe(400);
    expect(res.body.message.startsWith(`${field}: `)).toBe(true);
  });

  it.each([
    ['event_id', { event_id: 'e\u0000' }],
    ['location', { location: 'Paris\nHub' }],
  ])('refuses a control character in a carrier event %s', async (field, overrides) => {
    const id = await registered(at(-DAY));
    const res = await postEvent(id, { status: 'in_transit', occurred_at: at(0), ...overrides });
    expect(res.status).toBe(400);
    expect(res.body.message.startsWith(`${field}: `)).toBe(true);
  });

  it('refuses a reference holding an unpaired surrogate with 400 naming it, and takes the corrected body under the same id', async () => {
    // Its fingerprint (jsonb) could not be written: the registration was refused with Postgres's words, and its id burnt for good.
    const id = randomUUID();
    const res = await register(registrationFor(id, { reference: 'a\ud83c' }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'bad_request', message: 'reference: must not contain unpaired surrogates (U+D800–U+DFFF alone)' });
    expect((await register(registrationFor(id, { reference: 'a\ud83c\udf89' }))).status).toBe(201);
  });

  it('refuses a carrier event whose event_id holds an unpaired surrogate with 400 naming it (stored as U+FFFD, it escaped deduplication)', async () => {
    const id = await registered(at(-DAY));
    const res = await postEvent(id, { status: 'in_transit', occurred_at: at(-HOUR), event_id: 'x\ud83c' });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('event_id: must not contain unpaired surrogates (U+D800–U+DFFF alone)');
  });

  it('takes tracking_number, reference and carrier at their limits (100, 200, 100 characters) and keeps them whole', async () => {
    const id = randomUUID();
    const limits = { tracking_number: 'T'.repeat(100), reference: 'R'.repeat(200), carrier: 'C'.repeat(100) };
    expect((await register(registrationFor(id, limits))).status).toBe(201);
    const { rows } = await h.pool.query('SELECT tracking_number, reference, carrier FROM dispatches WHERE id = $1', [id]);
    expect(rows).toEqual([limits]);
  });

  it.each([
    ['tracking_number', 101, 'must be 1 to 100 characters long'],
    ['reference', 201, 'must be 1 to 200 characters long'],
  ])('refuses a %s one character over its limit (%i), naming it', async (field, length, reason) => {
    const res = await register(registrationFor(randomUUID(), { [field]: 'x'.repeat(length) }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'bad_request', message: `${field}: ${reason}` });
  });

  it('refuses a metadata object (no such field) with 400 naming it and listing the known fields', async () => {
    const res = await register(registrationFor(randomUUID(), { metadata: { order: 'x'.repeat(500) } }));
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^metadata: is not a known field \(known: id, dispatch_date, destination, locale, carrier, tracking_number, reference\)$/); // prettier-ignore
  });

  it('takes a carrier event whose event_id and location are at their limit (200 characters), and refuses one over it', async () => {
    const id = await registered(at(-DAY));
    const atLimit = { status: 'in_transit', occurred_at: at(-HOUR), event_id: 'e'.repeat(200), location: 'l'.repeat(200) };
    expect((await postEvent(id, atLimit)).status).toBe(202);
    const over = await postEvent(id, { ...atLimit, event_id: 'e'.repeat(201) });
    expect(over.status).toBe(400);
    expect(over.body.message).toBe('event_id: must be 1 to 200 characters long');
  });

  it('counts the length of a string field in characters, as the document does, not in UTF-16 units', async () => {
    // 100 characters outside the Basic Multilingual Plane: maxLength 100 allows it (200 UTF-16 units).
    const res = await register(registrationFor(randomUUID(), { carrier: '𝒞'.repeat(100) }));
    expect(res.status).toBe(201);
  });
});

describe('a value that is not a timestamp is refused in the terms of the mistake', () => {
  const today = new Date().toISOString().slice(0, 10);
  const lastHour = new Date(Date.now() - 3_600_000).toISOString().slice(0, 19);

  it('refuses a date alone as dispatch_date, saying a date is not a timestamp', async () => {
    const res = await register(registrationFor(randomUUID(), { dispatch_date: today }));
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(
      'dispatch_date: must be an RFC 3339 timestamp with a time and an offset (Z or ±hh:mm), e.g. 2026-12-07T09:30:00Z: a date alone is not a timestamp',
    );
  });

  it('refuses an occurred_at without an offset, saying to add Z or the local offset', async () => {
    const id = await registered(at(-DAY));
    const res = await postEvent(id, { status: 'in_transit', occurred_at: lastHour });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^occurred_at: must be an RFC 3339 timestamp .*: it has no offset \(add Z for UTC/);
  });

  it('refuses created_after whose unencoded "+05:30" arrived as a space, saying to write %2B', async () => {
    const res = await request(h.baseUrl, `/v1/dispatches?created_after=${lastHour}+05:30`, { headers: bearer(key) });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^created_after: must be an RFC 3339 timestamp .*a "\+" in a query string becomes; write it as %2B$/);
  });

  it('takes a dispatch_date written with a lower-case "t" and "z" (RFC 3339 §5.6 allows both), as the instant it names', async () => {
    const instant = new Date(Math.floor((Date.now() - 3_600_000) / 1000) * 1000).toISOString();
    const res = await register(registrationFor(randomUUID(), { dispatch_date: instant.replace('T', 't').replace('Z', 'z') }));
    expect(res.status).toBe(201);
    expect(res.body.dispatch_date).toBe(instant);
  });

  it('takes an occurred_at with nine digits of fractional seconds, keeping its milliseconds', async () => {
    const id = await registered(at(-DAY));
    const res = await postEvent(id, { status: 'in_transit', occurred_at: `${lastHour}.123456789Z` });
    expect(res.status).toBe(202);
    const { rows } = await h.pool.query('SELECT occurred_at FROM carrier_events WHERE dispatch_id = $1', [id]);
    expect(rows.map((row) => row.occurred_at.toISOString())).toEqual([`${lastHour}.123Z`]);
  });

  it.each([
    ['a leap second', `${today}T23:59:60Z`, /: a leap second \(:60\) is not taken; write :59$/],
    ['ISO 8601 basic format', today.replaceAll('-', ''), /: ISO 8601's basic format \(no "-" and ":"\) is not taken$/],
    ['a space for the "T"', `${lastHour.replace('T', ' ')}Z`, /: separate the date and the time with "T", not a space$/],
  ])('refuses an occurred_at with %s in the terms of the mistake, not as "not RFC 3339"', async (_, occurredAt, reason) => {
    const id = await registered(at(-DAY));
    const res = await postEvent(id, { status: 'in_transit', occurred_at: occurredAt });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'bad_request', message: expect.stringMatching(/^occurred_at: must be an RFC 3339 timestamp/) });
    expect(res.body.message).toMatch(reason);
  });

  it('refuses a dispatch_date written as a timestamp in basic format, "20261207T100000Z", naming dispatch_date', async () => {
    const res = await register(registrationFor(randomUUID(), { dispatch_date: `${today.replaceAll('-', '')}T000000Z` }));
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^dispatch_date: .*basic format/);
  });

  it.each(['0000-01-01T00:00:00Z', '9999-12-31T23:59:59Z'])(
    'refuses an occurred_at of %s with the time bounds, naming occurred_at',
    async (occurredAt) => {
      const id = await registered(at(-DAY));
      const res = await postEvent(id, { status: 'in_transit', occurred_at: occurredAt });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'bad_request', message: expect.stringMatching(/^occurred_at: must lie within/) });
    },
  );

  it('takes the same created_after with the "+" written %2B', async () => {
    const res = await request(h.baseUrl, `/v1/dispatches?created_after=${lastHour}%2B05:30`, { headers: bearer(key) });
    expect(res.status).toBe(200);
  });
});
