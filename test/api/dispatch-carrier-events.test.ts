// GET /v1/dispatches/{id}/events (docs/carrier-events.md "GET /v1/dispatches/{id}/events"): the
// dispatch's carrier events in arrival order with what each did (`effect`), a page at a time; only
// the key's issuer and mode see them (the other mode's or an unknown id → 404, another issuer's → 403,
// as on every route that names a dispatch); parameters checked like the list's.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startHarness, type Harness } from '../support/harness.js';
import { until } from '../support/until.js';
import { bearer, registrationFor, request } from './http.js';

let h: Harness;
let key: string;
let otherIssuerKey: string;
let testModeKey: string;
let writeOnlyKey: string;

const DAY = 86_400_000;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY).toISOString();
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3,6}Z$/;

const postEvent = (id: string, body: unknown) => request(h.baseUrl, `/v1/dispatches/${id}/events`, { headers: bearer(key), body });
const listEvents = (id: string, query = '', withKey = key) =>
  request(h.baseUrl, `/v1/dispatches/${id}/events${query}`, { headers: bearer(withKey) });

async function registered(): Promise<string> {
  const id = randomUUID();
  const res = await request(h.baseUrl, '/v1/dispatches', {
    headers: bearer(key),
    body: registrationFor(id, { dispatch_date: daysAgo(20) }),
  });
  expect(res.status).toBe(201);
  return id;
}

/** The whole list once the workflow has recorded an effect for each of `count` events. */
async function foldedEvents(id: string, count: number) {
  return until(async () => {
    const res = await listEvents(id, '?limit=100');
    const data = res.body.data as Array<{ effect: string | null }>;
    return data.length === count && data.every((event) => event.effect !== null) ? data : undefined;
  }, `${count} folded carrier events`);
}

beforeAll(async () => {
  h = await startHarness();
  const issuer = await h.createIssuer('Carrier Events Issuer');
  key = (await h.createKey(issuer)).key;
  testModeKey = (await h.createKey(issuer, { mode: 'test' })).key;
  writeOnlyKey = (await h.createKey(issuer, { scopes: ['events:write'] })).key;
  otherIssuerKey = (await h.createKey(await h.createIssuer('Other Issuer'))).key;
});

afterAll(async () => {
  await h?.stop();
});

describe('GET /v1/dispatches/{id}/events', () => {
  it('lists an applied event, a backward one and a stale one in arrival order, each with its effect', async () => {
    const id = await registered();
    const outForDelivery = { status: 'out_for_delivery', occurred_at: daysAgo(18), event_id: 'scan-1', location: 'Paris 11e' };
    expect((await postEvent(id, outForDelivery)).status).toBe(202);
    // Later, but a step back: the card stays out for delivery.
    expect((await postEvent(id, { status: 'in_transit', occurred_at: daysAgo(17) })).status).toBe(202);
    // An exception older than the scan that set the current status.
    expect((await postEvent(id, { status: 'exception', reason: 'postal_delay', occurred_at: daysAgo(19) })).status).toBe(202);

    const events = await foldedEvents(id, 3);
    expect(events).toEqual([
      {
        id: expect.stringMatching(/^cevt_[0-9a-f]{24}$/),
        status: 'out_for_delivery',
        occurred_at: new Date(outForDelivery.occurred_at).toISOString(),
        received_at: expect.stringMatching(ISO_UTC),
        reason: null,
        location: 'Paris 11e',
        event_id: 'scan-1',
        effect: 'applied',
        original: null,
      },
      expect.objectContaining({ status: 'in_transit', event_id: null, location: null, effect: 'backward' }),
      expect.objectContaining({ status: 'exception', reason: 'postal_delay', effect: 'stale' }),
    ]);
    expect(new Set(events.map((event) => (event as unknown as { id: string }).id)).size).toBe(3);
  });

  it('answers an empty list for a dispatch without carrier events', async () => {
    const id = await registered();
    const res = await listEvents(id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [], next_cursor: null });
  });

  it('pages with limit and cursor: every event once, in order, next_cursor null on the last page', async () => {
    const id = await registered();
    for (let i = 0; i < 5; i++) {
      expect((await postEvent(id, { status: 'in_transit', occurred_at: daysAgo(19 - i * 0.1), event_id: `page-${i}` })).status).toBe(202);
    }
    const all = (await listEvents(id, '?limit=100')).body.data.map((event: { event_id: string }) => event.event_id);
    expect(all).toEqual(['page-0', 'page-1', 'page-2', 'page-3', 'page-4']);

    const seen: string[] = [];
    const pageSizes: number[] = [];
    let cursor: string | null = null;
    do {
      const res = await listEvents(id, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      pageSizes.push(res.body.data.length);
      seen.push(...res.body.data.map((event: { event_id: string }) => event.event_id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(pageSizes).toEqual([2, 2, 1]);
    expect(seen).toEqual(all);
  });

  it("answers 403 forbidden for another issuer's dispatch, as every cross-issuer lookup answers", async () => {
    const id = await registered();
    const res = await listEvents(id, '', otherIssuerKey);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'forbidden', message: expect.stringContaining('another issuer') });
  });

  it('answers 404 to a key of the other mode, and for an unknown id', async () => {
    const id = await registered();
    expect((await listEvents(id, '', testModeKey)).status).toBe(404);
    expect((await listEvents(randomUUID())).status).toBe(404);
  });

  it('answers 403 to a key without status:read', async () => {
    const id = await registered();
    const res = await listEvents(id, '', writeOnlyKey);
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
  });

  it.each([
    ['limit', '?limit=0'],
    ['limit', '?limit=101'],
    ['cursor', '?cursor=bm90LWEtY3Vyc29y'],
    // Tampered cursors whose text Postgres would refuse (a 500 before): a day no calendar has, year 0000, a NUL in the key.
    ['cursor', `?cursor=${Buffer.from('2026-02-30T00:00:00.000000Z|x').toString('base64url')}`],
    ['cursor', `?cursor=${Buffer.from('2026-11-28T24:00:00.000000Z|x').toString('base64url')}`],
    ['cursor', `?cursor=${Buffer.from('0000-01-01T00:00:00.000000Z|x').toString('base64url')}`],
    ['cursor', `?cursor=${Buffer.from('2026-01-01T00:00:00.000000Z|a\u0000b').toString('base64url')}`],
    ['limit', '?limit=2&limit=3'],
    ['status', '?status=delivered'],
  ])('answers 400 naming %s for %s', async (name, query) => {
    const id = await registered();
    const res = await listEvents(id, query);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(name === 'status' ? /unrecognized key.*status|status/i : new RegExp(`^${name}: `));
  });

  it('answers 400 for a bad id before 403 for a key without status:read', async () => {
    const res = await listEvents('12345', '', writeOnlyKey);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^id: /);
  });

  it('answers 400 naming id when it is not a UUID v4', async () => {
    const res = await listEvents('12345');
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^id: /);
  });
});
