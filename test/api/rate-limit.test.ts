// Rate limiting (docs/security.md "Rate limits"): fixed one-minute windows per key shared by every API
// process through Postgres, headers on every response, 429 with Retry-After, and a refused request
// neither counts nor moves the window. A small limit keeps the tests short.
import { randomInt, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startHarness, type Harness } from '../support/harness.js';
import { bearer, registrationFor, request, type TestResponse } from './http.js';

const LIMIT = 5;
let h: Harness;
let issuer: string;
let dispatchId: string;

/** A fresh key: its own window. */
async function freshKey(): Promise<string> {
  return (await h.createKey(issuer)).key;
}

/** A loopback address no other test uses, so the per-IP window starts empty. */
function freshClientIp(): string {
  return `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
}

const getStatus = (key: string, baseUrl = h.baseUrl) => request(baseUrl, `/v1/status/${dispatchId}`, { headers: bearer(key) });

async function windowCount(subject: string): Promise<number> {
  const { rows } = await h.pool.query('SELECT count FROM rate_limit_windows WHERE subject = $1 ORDER BY window_start DESC LIMIT 1', [
    subject,
  ]);
  return rows[0]?.count ?? 0;
}

function expectRateLimitHeaders(res: TestResponse, limit = LIMIT): void {
  expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(res.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
  const reset = Number(res.headers['x-ratelimit-reset']);
  const now = Date.now() / 1000;
  expect(reset % 60).toBe(0); // epoch seconds, at a minute boundary
  expect(reset).toBeGreaterThan(now);
  expect(reset).toBeLessThanOrEqual(now + 60);
}

beforeAll(async () => {
  h = await startHarness({ env: { RATE_LIMIT_PER_MINUTE: String(LIMIT) } });
  issuer = await h.createIssuer('Rate Limit Issuer');
  dispatchId = randomUUID();
  const key = await freshKey();
  expect((await request(h.baseUrl, '/v1/dispatches', { headers: bearer(key), body: registrationFor(dispatchId) })).status).toBe(201);
});

afterAll(async () => {
  await h?.stop();
});

// Each test needs its requests to fall in one window: start none in a minute's last 8 seconds.
beforeEach(async () => {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 52_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 100));
}, 15_000);

describe('rate-limit headers', () => {
  it('are on every response: 200, 400, 401, 403, 404 and 405', async () => {
    const key = await freshKey();
    const readOnly = (await h.createKey(issuer, { scopes: ['status:read'] })).key;
    const responses = [
      await getStatus(key),
      await request(h.baseUrl, '/v1/status/nope', { headers: bearer(key) }),
      await request(h.baseUrl, `/v1/status/${dispatchId}`),
      await request(h.baseUrl, '/v1/dispatches', { headers: bearer(readOnly), body: registrationFor(randomUUID()) }),
      await request(h.baseUrl, `/v1/status/${randomUUID()}`, { headers: bearer(key) }),
      await request(h.baseUrl, '/v1/no-such-route', { headers: bearer(key) }),
      await request(h.baseUrl, `/v1/status/${dispatchId}`, { method: 'DELETE', headers: bearer(key) }),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 400, 401, 403, 404, 404, 405]);
    // The keyless request's are those of its client IP's window.
    for (const res of responses) expectRateLimitHeaders(res, res.status === 401 ? h.config.RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE : LIMIT);
  });

  it('count down X-RateLimit-Remaining by one per request', async () => {
    const key = await freshKey();
    const remaining: number[] = [];
    for (let i = 0; i < 3; i++) remaining.push(Number((await getStatus(key)).headers['x-ratelimit-remaining']));
    expect(remaining).toEqual([LIMIT - 1, LIMIT - 2, LIMIT - 3]);
  });
});

describe('429 rate_limit_exceeded', () => {
  it('answers the request after the limit with 429, Retry-After in whole seconds and Remaining 0', async () => {
    const key = await freshKey();
    for (let i = 0; i < LIMIT; i++) expect((await getStatus(key)).status).toBe(200);
    const res = await getStatus(key);
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ error: 'rate_limit_exceeded', message: expect.any(String) });
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
    const retryAfter = Number(res.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) + retryAfter - 1);
    expect(res.headers['x-ratelimit-remaining']).toBe('0');
    expectRateLimitHeaders(res);
  });

  it('does not count a refused request nor move the window', async () => {
    const { id: keyId, key } = await h.createKey(issuer);
    const admitted: TestResponse[] = [];
    for (let i = 0; i < LIMIT; i++) admitted.push(await getStatus(key));
    const refused = [await getStatus(key), await getStatus(key), await getStatus(key)];
    expect(refused.map((r) => r.status)).toEqual([429, 429, 429]);
    for (const res of refused) expect(res.headers['x-ratelimit-reset']).toBe(admitted[0].headers['x-ratelimit-reset']);
    expect(await windowCount(`key:${keyId}`)).toBe(LIMIT);
  });

  it('limits each key separately', async () => {
    const busy = await freshKey();
    for (let i = 0; i <= LIMIT; i++) await getStatus(busy);
    expect((await getStatus(busy)).status).toBe(429);
    expect((await getStatus(await freshKey())).status).toBe(200);
  });

  it('admits exactly the limit from a concurrent burst', async () => {
    const key = await freshKey();
    const burst = await Promise.all(Array.from({ length: LIMIT * 4 }, () => getStatus(key)));
    const statuses = burst.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(LIMIT);
    expect(statuses.filter((s) => s === 429)).toHaveLength(LIMIT * 3);
    const remaining = burst.filter((r) => r.status === 200).map((r) => Number(r.headers['x-ratelimit-remaining']));
    expect(remaining.sort()).toEqual(Array.from({ length: LIMIT }, (_, i) => i));
  });
});

describe('requests without a valid key', () => {
  // Their own window per client IP, RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE, here as small as the keys'.
  let keyless: string;
  beforeAll(async () => {
    keyless = (await h.startExtraApi({ RATE_LIMIT_PER_MINUTE: String(LIMIT), RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: String(LIMIT) }))
      .baseUrl;
  });

  it('are counted against the client IP, and 401 carries the headers', async () => {
    const localAddress = freshClientIp();
    const first = await request(keyless, `/v1/status/${dispatchId}`, { localAddress });
    const second = await request(keyless, `/v1/status/${dispatchId}`, { localAddress, headers: { authorization: 'Bearer nonsense' } });
    expect([first.status, second.status]).toEqual([401, 401]);
    expectRateLimitHeaders(first);
    expect(Number(first.headers['x-ratelimit-remaining'])).toBe(LIMIT - 1);
    expect(Number(second.headers['x-ratelimit-remaining'])).toBe(LIMIT - 2);
    expect(await windowCount(`ip:${localAddress}`)).toBe(2);
  });

  // Was "get 401 rather than 429": the IP window's 429 now comes first, the only way to refuse a
  // keyless flood (test/api/unauthenticated-limit.test.ts).
  it('get 429 rather than 401 once the IP window is full', async () => {
    const localAddress = freshClientIp();
    for (let i = 0; i < LIMIT; i++) await request(keyless, `/v1/status/${dispatchId}`, { localAddress });
    const res = await request(keyless, `/v1/status/${dispatchId}`, { localAddress });
    expect(res.status).toBe(429);
    expect(res.headers['x-ratelimit-remaining']).toBe('0');
  });

  it('do not use up the window of a valid key sent from the same IP', async () => {
    const localAddress = freshClientIp();
    for (let i = 0; i < LIMIT + 1; i++) await request(keyless, `/v1/status/${dispatchId}`, { localAddress });
    const key = await freshKey();
    const res = await request(keyless, `/v1/status/${dispatchId}`, { localAddress, headers: bearer(key) });
    expect(res.status).toBe(200);
  });
});

describe('several API processes', () => {
  it('share one window per key', async () => {
    const second = await h.startExtraApi({ RATE_LIMIT_PER_MINUTE: String(LIMIT) });
    const key = await freshKey();
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT * 2; i++) statuses.push((await getStatus(key, i % 2 === 0 ? h.baseUrl : second.baseUrl)).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(LIMIT);
    expect(statuses.slice(LIMIT)).toEqual(Array(LIMIT).fill(429));
  });

  it('share the window under a concurrent burst on both processes', async () => {
    const second = await h.startExtraApi({ RATE_LIMIT_PER_MINUTE: String(LIMIT) });
    const key = await freshKey();
    const burst = await Promise.all(Array.from({ length: LIMIT * 4 }, (_, i) => getStatus(key, i % 2 === 0 ? h.baseUrl : second.baseUrl)));
    expect(burst.filter((r) => r.status === 200)).toHaveLength(LIMIT);
  });
});

describe('a large limit (slots claimed ahead of use)', () => {
  // 300 a minute with leases from 200: each write also claims 1% of the limit (3 slots).
  const LARGE = 300;
  const LEASED = { RATE_LIMIT_PER_MINUTE: String(LARGE), RATE_LIMIT_LEASE_FROM: '200' };

  it('admits exactly the limit to one client, then 429', async () => {
    const api = await h.startExtraApi(LEASED);
    const { id, key } = await h.createKey(issuer);
    const statuses: number[] = [];
    for (let i = 0; i < LARGE + 2; i++) statuses.push((await getStatus(key, api.baseUrl)).status);
    expect(statuses.slice(0, LARGE).every((s) => s === 200)).toBe(true);
    expect(statuses.slice(LARGE)).toEqual([429, 429]);
    expect(await windowCount(`key:${id}`)).toBe(LARGE);
  }, 30_000);

  it('has counted every admitted request in Postgres before answering it', async () => {
    const api = await h.startExtraApi(LEASED);
    const { id, key } = await h.createKey(issuer);
    for (let i = 1; i <= 10; i++) {
      expect((await getStatus(key, api.baseUrl)).status).toBe(200);
      const counted = await windowCount(`key:${id}`);
      expect(counted).toBeGreaterThanOrEqual(i);
      expect(counted).toBeLessThanOrEqual(i + 2 * (LARGE / 100)); // a lease and a half at most
    }
  });

  it('never admits more than the limit across two processes under a concurrent burst', async () => {
    const [a, b] = [await h.startExtraApi(LEASED), await h.startExtraApi(LEASED)];
    const { id, key } = await h.createKey(issuer);
    const burst = await Promise.all(Array.from({ length: LARGE + 100 }, (_, i) => getStatus(key, i % 2 === 0 ? a.baseUrl : b.baseUrl)));
    const admitted = burst.filter((r) => r.status === 200).length;
    expect(admitted).toBeLessThanOrEqual(LARGE);
    // Slots one process claimed but had no request left for are the only shortfall: at most one lease each.
    expect(admitted).toBeGreaterThanOrEqual(LARGE - 2 * (LARGE / 100));
    expect(burst.filter((r) => r.status !== 200).every((r) => r.status === 429)).toBe(true);
    expect(await windowCount(`key:${id}`)).toBe(LARGE);
  }, 30_000);
});
