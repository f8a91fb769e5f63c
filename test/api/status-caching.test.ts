// Caching for pollers on GET /v1/status/{id} (docs/http-contract.md "GET
// /v1/status/{id}"): a weak ETag from the projection version and the locale, Cache-Control private with a
// max-age up to the next prediction refresh, and If-None-Match → 304 without a body, counted by the
// rate limit. Plain reads by a key the API process has verified are answered by the fast path
// (api/fast-status.ts), reads with ?locale= by the Koa route: both are exercised.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startHarness, type Harness } from '../support/harness.js';
import { until } from '../support/until.js';
import { bearer, registrationFor, request, type TestResponse } from './http.js';

const DAY = 86_400_000;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY).toISOString();

let h: Harness;
let issuerId: string;
let key: string;
let otherIssuerKey: string;

const read = (id: string, headers: Record<string, string> = {}, withKey = key, query = '') =>
  request(h.baseUrl, `/v1/status/${id}${query}`, { headers: { ...bearer(withKey), ...headers } });

async function registered(): Promise<string> {
  const id = randomUUID();
  const res = await request(h.baseUrl, '/v1/dispatches', {
    headers: bearer(key),
    body: registrationFor(id, { dispatch_date: daysAgo(3), locale: 'en-GB' }),
  });
  expect(res.status).toBe(201);
  return id;
}

function expectNotModified(res: TestResponse, tag: string): void {
  expect(res.status).toBe(304);
  expect(res.text).toBe('');
  expect(res.headers['etag']).toBe(tag);
  expect(res.headers['cache-control']).toMatch(/^private, max-age=\d+$/);
  expect(res.headers['x-request-id']).toBeTruthy();
  expect(res.headers['x-ratelimit-limit']).toBeTruthy();
  expect(res.headers['x-ratelimit-reset']).toBeTruthy();
}

beforeAll(async () => {
  h = await startHarness();
  issuerId = await h.createIssuer('Caching Issuer');
  key = (await h.createKey(issuerId)).key;
  otherIssuerKey = (await h.createKey(await h.createIssuer('Other Caching Issuer'))).key;
});

afterAll(async () => {
  await h?.stop();
});

describe('GET /v1/status/{id} caching for pollers', () => {
  it('sends a weak ETag that stays the same across two reads of an unchanged record', async () => {
    const id = await registered();
    const first = await read(id);
    const second = await read(id);
    expect(first.status).toBe(200);
    expect(first.headers['etag']).toMatch(/^W\/"\d+-default"$/);
    expect(second.headers['etag']).toBe(first.headers['etag']);
  });

  it('changes the ETag once a carrier event changes the record', async () => {
    const id = await registered();
    const before = await read(id);
    const event = await request(h.baseUrl, `/v1/dispatches/${id}/events`, {
      headers: bearer(key),
      body: { status: 'in_transit', occurred_at: daysAgo(2), event_id: 'scan-1' },
    });
    expect(event.status).toBe(202);
    const after = await until(async () => {
      const res = await read(id);
      return res.body?.status === 'in_transit' ? res : undefined;
    }, 'the carrier event in the status record');
    expect(after.headers['etag']).toMatch(/^W\/"\d+-default"$/);
    expect(after.headers['etag']).not.toBe(before.headers['etag']);
    // The old tag no longer matches: the poller gets the new record.
    const revalidated = await read(id, { 'if-none-match': before.headers['etag'] as string });
    expect(revalidated.status).toBe(200);
    expect(revalidated.body.status).toBe('in_transit');
  });

  it('tags each ?locale= rendering apart from the default one', async () => {
    const id = await registered();
    const plain = await read(id);
    const french = await read(id, {}, key, '?locale=fr-FR');
    expect(french.status).toBe(200);
    expect(french.headers['etag']).toMatch(/^W\/"\d+-fr-FR"$/);
    expect(french.headers['etag']).not.toBe(plain.headers['etag']);
    // The plain read's tag does not revalidate the French rendering.
    expect((await read(id, { 'if-none-match': plain.headers['etag'] as string }, key, '?locale=fr-FR')).status).toBe(200);
  });

  it('answers 304 without a body to If-None-Match with the current tag, counted by the rate limit (a plain read)', async () => {
    const id = await registered();
    const first = await read(id);
    const tag = first.headers['etag'] as string;
    const notModified = await read(id, { 'if-none-match': tag });
    expectNotModified(notModified, tag);
    expect(Number(notModified.headers['x-ratelimit-remaining'])).toBe(Number(first.headers['x-ratelimit-remaining']) - 1);
  });

  it('answers 304 with ?locale= too (the Koa route), counted by the rate limit', async () => {
    const id = await registered();
    const first = await read(id, {}, key, '?locale=fr-FR');
    const tag = first.headers['etag'] as string;
    const notModified = await read(id, { 'if-none-match': tag }, key, '?locale=fr-FR');
    expectNotModified(notModified, tag);
    expect(Number(notModified.headers['x-ratelimit-remaining'])).toBe(Number(first.headers['x-ratelimit-remaining']) - 1);
  });

  it('answers 304 to a list of tags that holds the current one, to the strong form of the tag, and to *', async () => {
    const id = await registered();
    const tag = (await read(id)).headers['etag'] as string;
    expectNotModified(await read(id, { 'if-none-match': `"elsewhere", ${tag}, W/"0-default"` }), tag);
    expectNotModified(await read(id, { 'if-none-match': tag.replace(/^W\//, '') }), tag);
    expectNotModified(await read(id, { 'if-none-match': '*' }), tag);
  });

  it('answers 200 with the record when If-None-Match names another tag', async () => {
    const id = await registered();
    const res = await read(id, { 'if-none-match': 'W/"0-default", "stale"' });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(id);
    expect(res.headers['etag']).toMatch(/^W\/"\d+-default"$/);
  });

  it("answers 403 to another issuer's key even with the dispatch's current tag or *", async () => {
    const id = await registered();
    const tag = (await read(id)).headers['etag'] as string;
    // Twice each: the first request verifies the key through Koa, the second may take the fast path.
    for (const header of [tag, tag, '*', '*']) {
      const res = await read(id, { 'if-none-match': header }, otherIssuerKey);
      expect(res.status).toBe(403);
      expect(res.body.error).toBe('forbidden');
      expect(res.headers['etag']).toBeUndefined();
    }
  });

  it('lets the poller cache privately for at most an hour, and at least a second', async () => {
    const id = await registered();
    for (const res of [await read(id), await read(id, {}, key, '?locale=fr-FR')]) {
      const maxAge = Number(/^private, max-age=(\d+)$/.exec(res.headers['cache-control'] as string)?.[1]);
      expect(maxAge).toBeGreaterThan(0);
      expect(maxAge).toBeLessThanOrEqual(3600);
    }
  });
});
