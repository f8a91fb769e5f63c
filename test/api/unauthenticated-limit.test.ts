// Requests without a valid key (docs/security.md "Rate limits"): each client IP has its own
// window, RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE, answered 429 once used up; once this process knows
// the window is full, a keyless or forged-key flood costs no database round trip (a key never seen
// from that IP gets at most one lookup a second), while valid keys keep their own window. Database
// round trips are counted by an API process started here on a counting wrapper of a real pg pool:
// every query still runs, the wrapper only records its text. A run of the 10,000 (limit 20, about
// 5 s): 20 + 5 key lookups and 7 counter statements.
import http from 'node:http';
import { randomInt, randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startApi } from '../../api/server.js';
import { createPool } from '../../db/pool.js';
import { generateKey } from '../../domain/api-keys.js';
import { loadConfig } from '../../platform/config.js';
import { requireTestEnv, startHarness, testLogger, type Harness } from '../support/harness.js';
import { bearer, registrationFor, request } from './http.js';

const UNAUTHENTICATED_LIMIT = 100;
let h: Harness;
let issuer: string;
let dispatchId: string;
const counted: Array<{ close(): Promise<void> }> = [];

/** A loopback address no other test uses, so its IP window starts empty. */
function freshClientIp(): string {
  return `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
}

/**
 * An API process whose pool records the text of every query sent through `pool.query` (the only way
 * the key lookup, the rate-limit counter and the status read reach Postgres; transactions, which
 * check out a client, are not on these paths).
 */
async function startCountedApi(env: Record<string, string>): Promise<{ baseUrl: string; queries: string[] }> {
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: requireTestEnv('TEST_DATABASE_URL'),
    TEMPORAL_ADDRESS: requireTestEnv('TEST_TEMPORAL_ADDRESS'),
    TEMPORAL_TASK_QUEUE: h.taskQueue,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '1000000', // as the harness: 127.0.0.1's window is shared
    ...env,
  });
  const pool = createPool(config.DATABASE_URL!, { applicationName: 'test-counted-api' });
  const queries: string[] = [];
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  pool.query = ((...args: unknown[]) => {
    const [statement] = args;
    queries.push(typeof statement === 'string' ? statement : String((statement as { text?: string }).text));
    return query(...args);
  }) as typeof pool.query;
  const api = await startApi({ config, pool, temporal: h.temporal, logger: testLogger('api-counted'), port: 0, host: '127.0.0.1' });
  counted.push({
    close: async () => {
      await api.close();
      await pool.end();
    },
  });
  return { baseUrl: api.url, queries };
}

/** Sends `count` GETs from one client address over keep-alive connections, `concurrency` at a time; returns the statuses. */
async function flood(
  baseUrl: string,
  path: string,
  count: number,
  headersFor: (i: number) => Record<string, string>,
  localAddress: string,
) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  const statuses: number[] = [];
  let next = 0;
  const one = (i: number) =>
    new Promise<number>((resolve, reject) => {
      const req = http.get(new URL(path, baseUrl), { agent, localAddress, headers: headersFor(i) }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      });
      req.on('error', reject);
    });
  const worker = async () => {
    while (next < count) statuses.push(await one(next++));
  };
  try {
    await Promise.all(Array.from({ length: 32 }, worker));
  } finally {
    agent.destroy();
  }
  return statuses;
}

const currentWindow = () => Math.floor(Date.now() / 60_000);

beforeAll(async () => {
  h = await startHarness({ env: { RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: String(UNAUTHENTICATED_LIMIT) } });
  issuer = await h.createIssuer('Unauthenticated Limit Issuer');
  dispatchId = randomUUID();
  const key = (await h.createKey(issuer)).key;
  expect((await request(h.baseUrl, '/v1/dispatches', { headers: bearer(key), body: registrationFor(dispatchId) })).status).toBe(201);
});

afterEach(async () => {
  while (counted.length > 0) await counted.pop()!.close();
});

afterAll(async () => {
  await h?.stop();
});

// Each test needs its requests to fall in one window: start none in a minute's last 15 seconds.
beforeEach(async () => {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 100));
}, 20_000);

describe('requests without a valid key', () => {
  it('get 429 with Retry-After and their IP window headers from the 101st in a minute, while valid keys from that IP keep their own window', async () => {
    const localAddress = freshClientIp();
    const known = await h.createKey(issuer);
    // The key has been verified by this process before (from another address).
    const elsewhere = freshClientIp();
    expect((await request(h.baseUrl, `/v1/status/${dispatchId}`, { localAddress: elsewhere, headers: bearer(known.key) })).status).toBe(
      200,
    );

    for (let i = 0; i < UNAUTHENTICATED_LIMIT; i++) {
      const res = await request(h.baseUrl, `/v1/status/${dispatchId}`, { localAddress });
      expect(res.status).toBe(401);
    }
    const refused = await request(h.baseUrl, `/v1/status/${dispatchId}`, { localAddress });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: 'rate_limit_exceeded', message: expect.any(String) });
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers['x-ratelimit-limit']).toBe(String(UNAUTHENTICATED_LIMIT));
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(Number(refused.headers['x-ratelimit-reset']) % 60).toBe(0);
    const forged = await request(h.baseUrl, `/v1/status/${dispatchId}`, { localAddress, headers: bearer(generateKey('live').key) });
    expect(forged.status).toBe(429);

    const valid = await request(h.baseUrl, `/v1/status/${dispatchId}`, { localAddress, headers: bearer(known.key) });
    expect(valid.status).toBe(200);
    expect(valid.headers['x-ratelimit-limit']).toBe(String(h.config.RATE_LIMIT_PER_MINUTE));
    expect(valid.headers['x-ratelimit-remaining']).toBe(String(h.config.RATE_LIMIT_PER_MINUTE - 2));
    // A key this process has never seen is still looked up (at most once a second per blocked IP).
    const fresh = await h.createKey(issuer);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const first = await request(h.baseUrl, `/v1/status/${dispatchId}`, { localAddress, headers: bearer(fresh.key) });
    expect(first.status).toBe(200);
    expect(first.headers['x-ratelimit-remaining']).toBe(String(h.config.RATE_LIMIT_PER_MINUTE - 1));
  });

  it('10,000 forged-key requests from one IP cost at most 2 × the limit + 2 + one lookup a second database round trips', async () => {
    const limit = 20;
    const api = await startCountedApi({ RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: String(limit) });
    const forgedKeys = Array.from({ length: 10_000 }, () => generateKey('live').key);
    const localAddress = freshClientIp();
    const before = api.queries.length;
    const started = Date.now();
    const firstWindow = currentWindow();
    const statuses = await flood(api.baseUrl, `/v1/status/${dispatchId}`, forgedKeys.length, (i) => bearer(forgedKeys[i]), localAddress);
    const seconds = Math.ceil((Date.now() - started) / 1000);
    const windows = currentWindow() - firstWindow + 1;
    const roundTrips = api.queries.length - before;

    // Per IP window: at most `limit` key lookups (one per admitted request) and `limit` + 1 counter
    // statements (each write admits at least one request until the window is full; the first also
    // inserts the window's row); after it, one lookup a second for a key never seen; and the old
    // windows' cleanup, once a minute.
    const bound = windows * (2 * limit + 2) + (seconds + 1) + windows;
    expect(roundTrips).toBeLessThanOrEqual(bound);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(windows * limit + seconds + 1);
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
  }, 180_000);
});

describe('the status fast path', () => {
  it('admits a request through the rate limit before reading the projection', async () => {
    const api = await startCountedApi({ RATE_LIMIT_PER_MINUTE: '3' });
    const { key } = await h.createKey(issuer);
    const read = async () => (await request(api.baseUrl, `/v1/status/${dispatchId}`, { headers: bearer(key) })).status;
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push(await read());
    const before = api.queries.length;
    for (let i = 0; i < 10; i++) statuses.push(await read());
    expect(statuses).toEqual([...Array(3).fill(200), ...Array(10).fill(429)]);
    expect(api.queries.slice(before).filter((text) => /\bdispatches\b/.test(text))).toEqual([]);
  });
});
