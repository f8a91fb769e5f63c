// What a carrier event costs the database, by the path it comes in on (ingest/carrier-events.ts): a
// tracking feed's body with one new checkpoint costs at most two statements more than
// POST /v1/dispatches/{id}/events with one new event (the feed's match, its ignored-list cleanup),
// and a body of N new checkpoints of one dispatch costs one log statement per chunk of
// SIGNAL_CHUNK_EVENTS, not one per checkpoint (ingestMany). Statements are counted on an API process
// started here on a counting wrapper of a real pg pool: every query still runs, the wrapper only
// records its text (the feed counts' write, a timer's, is left out). Each request is sent twice
// first with other events, so that the key, the feed and the dispatch's facts are held and the
// rate-limit windows exist, and the earlier events are folded: what is counted is the steady cost.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startApi } from '../../api/server.js';
import { createPool } from '../../db/pool.js';
import { SIGNAL_CHUNK_EVENTS } from '../../ingest/carrier-events.js';
import { loadConfig } from '../../platform/config.js';
import { requireTestEnv, startHarness, testLogger, type Harness } from '../support/harness.js';
import { createFeed, easyPostBody, postInbound, type CreatedFeed } from '../support/tracking-feeds.js';
import { until } from '../support/until.js';
import { bearer, request } from './http.js';

const HOUR = 3_600_000;
const SECRET = 'whsec-feed-statements-0123456789';
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
const trackingNumber = () => `9400 1000 ${Math.floor(Math.random() * 1e12)}`;

let h: Harness;
let key: string;
let api: { url: string; close(): Promise<void> };
let pool: ReturnType<typeof createPool>;
const queries: string[] = [];

beforeAll(async () => {
  h = await startHarness({});
  const issuerId = await h.createIssuer('Feed Statements Issuer');
  key = (await h.createKey(issuerId)).key;
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: requireTestEnv('TEST_DATABASE_URL'),
    TEMPORAL_ADDRESS: requireTestEnv('TEST_TEMPORAL_ADDRESS'),
    TEMPORAL_TASK_QUEUE: h.taskQueue,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '1000000',
  });
  pool = createPool(config.DATABASE_URL!, { applicationName: 'test-feed-statements' });
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  pool.query = ((...args: unknown[]) => {
    const [statement] = args;
    queries.push(typeof statement === 'string' ? statement : String((statement as { text?: string }).text));
    return query(...args);
  }) as typeof pool.query;
  api = await startApi({ config, pool, temporal: h.temporal, logger: testLogger('api-counted'), port: 0, host: '127.0.0.1' });
}, 60_000);

afterAll(async () => {
  await api?.close();
  await pool?.end();
  await h?.stop();
});

/**
 * The statements made while `send` ran (it must succeed), but for the feed counts' write: a timer's,
 * once a second per feed (api/feed-counts.ts), not the request's.
 */
async function statementsOf(send: () => Promise<{ status: number }>): Promise<string[]> {
  const before = queries.length;
  const res = await send();
  expect(res.status).toBeLessThan(300);
  return queries.slice(before).filter((text) => !/\btracking_feed_counts\b/.test(text));
}

async function register(body: Record<string, unknown>): Promise<string> {
  const id = randomUUID();
  const res = await request(api.url, '/v1/dispatches', {
    headers: bearer(key),
    body: { id, destination: { postal_code: '62701', country_code: 'US' }, dispatch_date: ago(4 * 24 * HOUR), ...body },
  });
  expect(res.status).toBe(201);
  return id;
}

/** Waits until the dispatch's workflow has folded `count` events (a folded one is answered `duplicate` by the match alone). */
const folded = (id: string, count: number) =>
  until(
    async () => (await h.pool.query('SELECT count(*)::int AS n FROM carrier_events WHERE dispatch_id = $1 AND effect IS NOT NULL', [id])).rows[0].n === count || undefined, // prettier-ignore
    `${count} events folded`,
    60_000,
  );

const scans = (count: number, from: number) =>
  Array.from({ length: count }, (_, i) => ({ status: 'in_transit', datetime: new Date(from + i * 60_000).toISOString() }));

describe('statements a carrier event costs', () => {
  let eventStatements: string[];
  let feed: CreatedFeed;

  beforeAll(async () => {
    feed = await createFeed(api.url, key, 'easypost', SECRET);
    const id = await register({});
    const post = (eventId: string, hoursAgo: number) =>
      request(api.url, `/v1/dispatches/${id}/events`, {
        headers: bearer(key),
        body: { status: 'in_transit', occurred_at: ago(hoursAgo * HOUR), event_id: eventId },
      });
    await post('warm-1', 30);
    await post('warm-2', 29);
    eventStatements = await statementsOf(() => post('counted', 28));
  }, 60_000);

  it('a feed body with one new checkpoint: at most two statements more than POST …/events with one new event', async () => {
    const number = trackingNumber();
    const id = await register({ tracking_number: number, carrier: 'usps' });
    const first = Date.now() - 3 * 24 * HOUR;
    for (const n of [1, 2]) expect((await postInbound(api.url, 'easypost', feed, easyPostBody(number, scans(n, first)))).status).toBe(200);
    await folded(id, 2);
    const counted = await statementsOf(() => postInbound(api.url, 'easypost', feed, easyPostBody(number, scans(3, first))));
    expect(counted.length).toBeLessThanOrEqual(eventStatements.length + 2);
  });

  it(`a feed body of 1,000 new checkpoints of one dispatch: one log statement per ${SIGNAL_CHUNK_EVENTS} of them, not one each`, async () => {
    const number = trackingNumber();
    const id = await register({ tracking_number: number, carrier: 'usps' });
    const first = Date.now() - 3 * 24 * HOUR;
    for (const n of [1, 2]) expect((await postInbound(api.url, 'easypost', feed, easyPostBody(number, scans(n, first)))).status).toBe(200);
    await folded(id, 2);
    const one = await statementsOf(() => postInbound(api.url, 'easypost', feed, easyPostBody(number, scans(3, first))));
    await folded(id, 3);
    const res = { body: undefined as unknown };
    const many = await statementsOf(async () => {
      const answer = await postInbound(api.url, 'easypost', feed, easyPostBody(number, scans(1003, first)));
      res.body = answer.body;
      return answer;
    });
    expect(res.body).toEqual({ received: 1003, applied: 1000, duplicate: 3, unmatched: 0, ignored: 0 });
    const chunks = Math.ceil(1000 / SIGNAL_CHUNK_EVENTS);
    expect(many.filter((text) => /INSERT INTO carrier_events/.test(text))).toHaveLength(chunks);
    // Beside the chunks' log statements, the body costs what a body of one new checkpoint costs.
    expect(many.length).toBeLessThanOrEqual(one.length - 1 + chunks);
    // Every checkpoint reached the workflow: each of the 1,003 has its effect.
    await folded(id, 1003);
  }, 120_000);
});
