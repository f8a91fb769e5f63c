// GET /v1/dispatches (docs/http-contract.md): the caller's dispatches of its key's mode, newest first, with
// filters and cursor pagination that neither repeats nor skips a dispatch, even while new ones are
// registered; each bad parameter is a 400 that names it.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { statusRecord } from '../../domain/dispatch-schemas.js';
import { startHarness, type Harness } from '../support/harness.js';
import { bearer, registrationFor, request, type TestResponse } from './http.js';

let h: Harness;
let key: string;
let testKey: string;
let otherIssuerKey: string;
/** The live dispatches of the main issuer, oldest first. */
const live: string[] = [];
let testModeId: string;
let otherIssuerId: string;
/** An instant between the first four live registrations and the last three. */
let middle: string;

const list = (query = '', withKey = key) => request(h.baseUrl, `/v1/dispatches${query}`, { headers: bearer(withKey) });

async function register(withKey: string, country = 'FR'): Promise<string> {
  const id = randomUUID();
  const body = registrationFor(id, { destination: { postal_code: country === 'FR' ? '75011' : '10115', country_code: country } });
  const res = await request(h.baseUrl, '/v1/dispatches', { headers: bearer(withKey), body });
  expect(res.status).toBe(201);
  return id;
}

/** Follows next_cursor from the first page to the last; returns every id in order. */
async function allPages(query: string, withKey = key, between?: () => Promise<void>): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res: TestResponse = await list(`${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, withKey);
    expect(res.status).toBe(200);
    ids.push(...res.body.data.map((record: { id: string }) => record.id));
    cursor = res.body.next_cursor;
    pages += 1;
    if (between) await between();
  } while (cursor);
  return { ids, pages };
}

beforeAll(async () => {
  h = await startHarness();
  const issuer = await h.createIssuer('List Issuer');
  key = (await h.createKey(issuer)).key;
  testKey = (await h.createKey(issuer, { mode: 'test' })).key;
  otherIssuerKey = (await h.createKey(await h.createIssuer('Other Issuer'))).key;

  for (const country of ['FR', 'DE', 'FR', 'DE']) live.push(await register(key, country));
  await new Promise((resolve) => setTimeout(resolve, 20));
  middle = new Date().toISOString();
  await new Promise((resolve) => setTimeout(resolve, 20));
  for (const country of ['FR', 'FR', 'DE']) live.push(await register(key, country));
  testModeId = await register(testKey);
  otherIssuerId = await register(otherIssuerKey);

  // Two of them move on, so that the status filter has something to find.
  for (const id of [live[1], live[5]]) {
    const event = { status: 'in_transit', occurred_at: new Date().toISOString() };
    expect((await request(h.baseUrl, `/v1/dispatches/${id}/events`, { headers: bearer(key), body: event })).status).toBe(202);
  }
  for (const id of [live[1], live[5]]) {
    for (let i = 0; i < 200; i++) {
      const res = await request(h.baseUrl, `/v1/status/${id}`, { headers: bearer(key) });
      if (res.body.status === 'in_transit') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

describe('GET /v1/dispatches', () => {
  it("lists the issuer's live dispatches newest first as status records, 20 by default", async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: { id: string }) => r.id)).toEqual([...live].reverse());
    expect(res.body.next_cursor).toBeNull();
    for (const record of res.body.data) expect(statusRecord.safeParse(record).success).toBe(true);
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
  });

  it("never shows another issuer's dispatches", async () => {
    expect((await list()).body.data.map((r: { id: string }) => r.id)).not.toContain(otherIssuerId);
    expect((await list('', otherIssuerKey)).body.data.map((r: { id: string }) => r.id)).toEqual([otherIssuerId]);
  });

  it('shows a test key only test-mode dispatches, and a live key none of them', async () => {
    expect((await list('', testKey)).body.data.map((r: { id: string }) => r.id)).toEqual([testModeId]);
    expect((await list()).body.data.map((r: { id: string }) => r.id)).not.toContain(testModeId);
  });

  it('pages through every dispatch once, in order, without duplicates or gaps', async () => {
    const { ids, pages } = await allPages('?limit=3');
    expect(pages).toBe(3);
    expect(ids).toEqual([...live].reverse());
  });

  it('keeps pages stable while new dispatches are registered between them', async () => {
    const added: string[] = [];
    const { ids } = await allPages('?limit=2&country_code=FR', key, async () => {
      added.push(await register(key));
    });
    const fr = [live[0], live[2], live[4], live[5]];
    expect(ids).toEqual([...fr].reverse());
    expect(added.length).toBeGreaterThan(1);
    for (const id of added) expect(ids).not.toContain(id);
  });

  it('pages through ten default pages (200 dispatches) while others are registered concurrently: none lost, none repeated', async () => {
    const issuer = await h.createIssuer('Paging Issuer');
    const ownKey = (await h.createKey(issuer)).key;
    const batch = await request(h.baseUrl, '/v1/dispatches/batch', {
      headers: bearer(ownKey),
      body: { dispatches: Array.from({ length: 200 }, () => registrationFor(randomUUID())) },
    });
    expect(batch.status).toBe(200);
    const existing = batch.body.results.map((result: { result: string; id: string }) => {
      expect(result.result).toBe('created');
      return result.id;
    });

    // Registrations run for the whole paging, two at a time, not only between pages.
    let paging = true;
    const added: string[] = [];
    const registering = Array.from({ length: 2 }, async () => {
      while (paging) added.push(await register(ownKey));
    });
    const seen: Array<{ id: string }> = [];
    let cursor: string | null = null;
    let pages = 0;
    try {
      do {
        const res: TestResponse = await list(cursor ? `?cursor=${encodeURIComponent(cursor)}` : '', ownKey);
        expect(res.status).toBe(200);
        seen.push(...res.body.data);
        cursor = res.body.next_cursor;
        pages += 1;
      } while (cursor);
    } finally {
      paging = false;
      await Promise.all(registering);
    }
    const ids = seen.map((record) => record.id);
    expect(added.length).toBeGreaterThan(0);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of existing) expect(ids).toContain(id);
    // What else it saw are dispatches registered while it paged, never another issuer's.
    for (const id of ids.filter((id) => !existing.includes(id))) expect(added).toContain(id);
    expect(pages).toBeGreaterThanOrEqual(10);
  }, 120_000);

  it('filters by status', async () => {
    const res = await list('?status=in_transit');
    expect(res.body.data.map((r: { id: string }) => r.id)).toEqual([live[5], live[1]]);
  });

  it('filters by destination country, in any letter case', async () => {
    const res = await list('?country_code=de');
    expect(res.body.data.map((r: { id: string }) => r.id)).toEqual([live[6], live[3], live[1]]);
  });

  it('filters by created_after (inclusive) and created_before (exclusive)', async () => {
    const after = await list(`?created_after=${middle}&limit=100`);
    expect(after.body.data.map((r: { id: string }) => r.id).slice(-3)).toEqual([live[6], live[5], live[4]]);
    expect(after.body.data.map((r: { id: string }) => r.id)).not.toContain(live[3]);
    const before = await list(`?created_before=${middle}`);
    expect(before.body.data.map((r: { id: string }) => r.id)).toEqual([live[3], live[2], live[1], live[0]]);
  });

  it('combines filters', async () => {
    const res = await list(`?status=in_transit&country_code=FR&created_after=${middle}`);
    expect(res.body.data.map((r: { id: string }) => r.id)).toEqual([live[5]]);
  });

  it('returns an empty page with a null cursor when nothing matches', async () => {
    expect((await list('?status=delivered')).body).toEqual({ data: [], next_cursor: null });
  });
});

describe('GET /v1/dispatches refuses a bad parameter with 400 naming it', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['status', '?status=lost', /^status: /],
    ['country_code', '?country_code=XYZ', /^country_code: /],
    ['an unassigned country_code', '?country_code=ZZ', /^country_code: /],
    ['created_after', '?created_after=yesterday', /^created_after: /],
    ['created_before', '?created_before=2026-13-01T00:00:00Z', /^created_before: /],
    ['created_before earlier than created_after', '?created_after=2026-11-02T00:00:00Z&created_before=2026-11-01T00:00:00Z', /^created_before: /], // prettier-ignore
    ['limit 0', '?limit=0', /^limit: /],
    ['limit above 100', '?limit=101', /^limit: /],
    ['a limit that is not a number', '?limit=ten', /^limit: /],
    ['a fractional limit', '?limit=2.5', /^limit: /],
    ['a cursor this API did not make', '?cursor=bm90LWEtY3Vyc29y', /^cursor: /],
    ['a repeated parameter', '?status=dispatched&status=in_transit', /^status: /],
    ['an unknown parameter', '?statuz=in_transit', /statuz/],
  ];

  it.each(cases)('%s', async (_name, query, message) => {
    const res = await list(query);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'bad_request', message: expect.stringMatching(message) });
  });
});

describe('GET /v1/dispatches access', () => {
  it('returns 403 to a key without status:read', async () => {
    const issuer = await h.createIssuer('Write Only');
    const writeOnly = (await h.createKey(issuer, { scopes: ['dispatches:write'] })).key;
    const res = await list('', writeOnly);
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
  });

  it('returns 401 without a key', async () => {
    expect((await request(h.baseUrl, '/v1/dispatches')).status).toBe(401);
  });
});
