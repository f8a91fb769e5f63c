// GET /metrics on the API port (docs/monitoring.md "Metrics"): no key, not rate limited, and the
// series move with real requests — latency by route template and status (the status fast path
// included, and never an id as a label), and 429s by the window they counted against.
import { randomInt, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bearer, registrationFor, request } from './http.js';
import { startHarness, type Harness } from '../support/harness.js';
import { parseExposition, scrape, valueOf } from '../support/prometheus.js';

const KEY_LIMIT = 5;
const IP_LIMIT = 3;
const HTTP = 'cds_http_request_duration_seconds_count';
let h: Harness;
let issuerId: string;

beforeAll(async () => {
  h = await startHarness({
    env: { RATE_LIMIT_PER_MINUTE: String(KEY_LIMIT), RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: String(IP_LIMIT) },
  });
  issuerId = await h.createIssuer('Metrics Issuer');
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

/**
 * A client address of this test's own, so its client IP window is not shared with other files'
 * (the first request of a key this API process has not verified yet takes a slot of it too).
 */
const freshClientIp = () => `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
const metrics = () => scrape(`${h.baseUrl}/metrics`);

describe('GET /metrics', () => {
  it('answers Prometheus text without a key, however often, and takes nothing from the client IP window', async () => {
    const localAddress = freshClientIp();
    for (let i = 0; i < IP_LIMIT + 2; i++) {
      const res = await request(h.baseUrl, '/metrics', { localAddress });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
      expect(parseExposition(res.text).samples.length).toBeGreaterThan(0);
    }
    // The window is untouched: a keyless API request from that address is still a 401, not a 429.
    expect((await request(h.baseUrl, `/v1/status/${randomUUID()}`, { localAddress })).status).toBe(401);
  });

  it('counts status reads answered by the fast path and by Koa under the route template /v1/status/:id, never the id', async () => {
    const { key } = await h.createKey(issuerId);
    const localAddress = freshClientIp();
    const id = randomUUID();
    expect(
      (await request(h.baseUrl, '/v1/dispatches', { method: 'POST', headers: bearer(key), body: registrationFor(id), localAddress }))
        .status,
    ).toBe(201);
    // The first read with ?locale= always goes through Koa; the one without it, with a key this
    // process has verified (the registration did), is answered by the fast path (api/fast-status.ts).
    const before = await metrics();
    expect((await request(h.baseUrl, `/v1/status/${id}?locale=fr`, { headers: bearer(key), localAddress })).status).toBe(200);
    const afterKoa = await metrics();
    expect((await request(h.baseUrl, `/v1/status/${id}`, { headers: bearer(key), localAddress })).status).toBe(200);
    const afterFast = await metrics();

    const series = { method: 'GET', route: '/v1/status/:id', status: '200' };
    expect(valueOf(afterKoa, HTTP, series)).toBe(valueOf(before, HTTP, series) + 1);
    expect(valueOf(afterFast, HTTP, series)).toBe(valueOf(afterKoa, HTTP, series) + 1);
    expect(afterFast.samples.filter((s) => Object.values(s.labels).some((v) => v.includes(id)))).toEqual([]);
  });

  it('labels a request no route matched as unmatched, not by its path', async () => {
    const { key } = await h.createKey(issuerId);
    const localAddress = freshClientIp();
    const path = `/no-such-page-${randomUUID()}`;
    const before = await metrics();
    expect((await request(h.baseUrl, path, { headers: bearer(key), localAddress })).status).toBe(404);
    const after = await metrics();
    expect(valueOf(after, HTTP, { route: 'unmatched', status: '404' })).toBe(
      valueOf(before, HTTP, { route: 'unmatched', status: '404' }) + 1,
    );
    expect(after.samples.some((s) => Object.values(s.labels).some((v) => v.includes(path)))).toBe(false);
  });

  it('counts a 429 refused to a key as one refusal of kind key', async () => {
    const { key } = await h.createKey(issuerId);
    const localAddress = freshClientIp();
    for (let i = 0; i < KEY_LIMIT; i++)
      expect((await request(h.baseUrl, `/v1/status/${randomUUID()}`, { headers: bearer(key), localAddress })).status).toBe(404);
    const before = await metrics();
    expect((await request(h.baseUrl, `/v1/status/${randomUUID()}`, { headers: bearer(key), localAddress })).status).toBe(429);
    const after = await metrics();
    expect(valueOf(after, 'cds_rate_limit_refusals_total', { kind: 'key' })).toBe(
      valueOf(before, 'cds_rate_limit_refusals_total', { kind: 'key' }) + 1,
    );
    expect(valueOf(after, 'cds_rate_limit_refusals_total', { kind: 'ip' })).toBe(
      valueOf(before, 'cds_rate_limit_refusals_total', { kind: 'ip' }),
    );
    expect(valueOf(after, HTTP, { route: '/v1/status/:id', status: '429' })).toBe(
      valueOf(before, HTTP, { route: '/v1/status/:id', status: '429' }) + 1,
    );
  });

  it('counts a 429 refused to a client IP without a valid key as one refusal of kind ip', async () => {
    const localAddress = freshClientIp();
    for (let i = 0; i < IP_LIMIT; i++) expect((await request(h.baseUrl, `/v1/status/${randomUUID()}`, { localAddress })).status).toBe(401);
    const before = await metrics();
    expect((await request(h.baseUrl, `/v1/status/${randomUUID()}`, { localAddress })).status).toBe(429);
    const after = await metrics();
    expect(valueOf(after, 'cds_rate_limit_refusals_total', { kind: 'ip' })).toBe(
      valueOf(before, 'cds_rate_limit_refusals_total', { kind: 'ip' }) + 1,
    );
    expect(valueOf(after, 'cds_rate_limit_refusals_total', { kind: 'key' })).toBe(
      valueOf(before, 'cds_rate_limit_refusals_total', { kind: 'key' }),
    );
  });

  it("counts a 429 refused to a client IP at a tracking feed URL that names no live feed as one refusal of kind ip, and once in the feed requests' not_found", async () => {
    const localAddress = freshClientIp();
    const unknown = '/v1/inbound/fd_0000000000000000';
    for (let i = 0; i < IP_LIMIT; i++)
      expect((await request(h.baseUrl, unknown, { method: 'POST', body: {}, localAddress })).status).toBe(404);
    const before = await metrics();
    expect((await request(h.baseUrl, unknown, { method: 'POST', body: {}, localAddress })).status).toBe(429);
    const after = await metrics();
    expect(valueOf(after, 'cds_rate_limit_refusals_total', { kind: 'ip' })).toBe(
      valueOf(before, 'cds_rate_limit_refusals_total', { kind: 'ip' }) + 1,
    );
    expect(valueOf(after, 'cds_feed_requests_total', { provider: 'unknown', outcome: 'not_found' })).toBe(
      valueOf(before, 'cds_feed_requests_total', { provider: 'unknown', outcome: 'not_found' }),
    );
  });
});
