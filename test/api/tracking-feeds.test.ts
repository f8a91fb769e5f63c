// Tracking feeds (docs/tracking-feeds.md, DESIGN §10), black-box against a running API and worker:
// the feeds API (secret never answered, Shippo's token shown once, test keys make test feeds), the
// inbound endpoint's answers (HEAD 200, 401 counted and nothing stored, 404 once revoked, 400 naming
// the field, 413, 429 with Retry-After), and matching (a test feed never touches a live dispatch, a
// checkpoint before registration is applied at registration, a recycled number goes to the most
// recent dispatch that can have it). Bodies are EasyPost's (test/support/tracking-feeds.ts); each
// provider's own long history is test/api/tracking-feed-providers.test.ts.
import { createHmac, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import { FeedCounter } from '../../api/feed-counts.js';
import { startApi } from '../../api/server.js';
import { dispatchFootprint } from '../../db/erasure.js';
import { eraseIssuerRows } from '../../db/issuer-erasure.js';
import { COUNTRY_ZONES } from '../../domain/tracking-feeds/country-zones.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { createCarrierEventIngest } from '../../ingest/carrier-events.js';
import { createFeedIngest } from '../../ingest/tracking-feeds.js';
import { dispatchWorkflowOptions } from '../../temporal/client.js';
import { startHarness, type Harness } from '../support/harness.js';
import { scrape, valueOf } from '../support/prometheus.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { fixtureText } from '../fixtures/tracking-feeds/load.js';
import { wallClock } from '../fixtures/tracking-feeds/journey.js';
import { createFeed, easyPostBody, postInbound, signed, type CreatedFeed } from '../support/tracking-feeds.js';
import { until } from '../support/until.js';
import { bearer, request } from './http.js';

let h: Harness;
let receiver: Receiver;
let key: string;
let testKey: string;
let readOnlyKey: string;

const HOUR = 3_600_000;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
const SECRET = 'whsec-feeds-test-0123456789';
const trackingNumber = () => `9400 1000 ${Math.floor(Math.random() * 1e12)}`;

beforeAll(async () => {
  h = await startHarness({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  receiver = await startReceiver();
  const issuerId = await h.createIssuer('Tracking Feeds Issuer');
  key = (await h.createKey(issuerId)).key;
  testKey = (await h.createKey(issuerId, { mode: 'test' })).key;
  readOnlyKey = (await h.createKey(issuerId, { scopes: ['status:read'] })).key;
  const created = await createWebhookEndpoint(h.pool, { issuerId, url: receiver.url, events: ['status.updated'] });
  if (!created.ok) throw new Error(created.reason);
}, 60_000);

afterAll(async () => {
  await receiver?.close();
  await h?.stop();
});

async function register(withKey: string, body: Record<string, unknown>): Promise<string> {
  const id = randomUUID();
  const res = await request(h.baseUrl, '/v1/dispatches', {
    headers: bearer(withKey),
    body: { id, destination: { postal_code: '62701', country_code: 'US' }, ...body },
  });
  expect(res.status).toBe(201);
  return id;
}

const statusOf = async (id: string, withKey = key) => (await request(h.baseUrl, `/v1/status/${id}`, { headers: bearer(withKey) })).body.status; // prettier-ignore
const eventsOf = async (id: string, withKey = key) =>
  (await request(h.baseUrl, `/v1/dispatches/${id}/events`, { headers: bearer(withKey) })).body.data as Array<{ status: string; occurred_at: string; original: unknown }>; // prettier-ignore
const webhooksOf = (id: string) =>
  receiver.requests.map((r) => JSON.parse(r.body.toString('utf8'))).filter((body) => body.data?.id === id) as Array<{ data: { status: string } }>; // prettier-ignore
const feedOf = async (feed: CreatedFeed, withKey = key) => (await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}`, { headers: bearer(withKey) })).body; // prettier-ignore

describe('the feeds API', () => {
  it('creates a feed whose url is the inbound path and whose answers never hold the secret', async () => {
    const res = await request(h.baseUrl, '/v1/tracking_feeds', { headers: bearer(key), body: { provider: 'easypost', secret: SECRET, description: 'EasyPost production' } }); // prettier-ignore
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^fd_[0-9A-Za-z]{16}$/),
      provider: 'easypost',
      url: `http://localhost:${h.config.PORT}/v1/inbound/${res.body.id}`,
      description: 'EasyPost production',
      created_at: expect.any(String),
      last_received_at: null,
      counts: { received: 0, applied: 0, duplicate: 0, unmatched: 0, ignored: 0, unauthorized: 0 },
    });
    const list = await request(h.baseUrl, '/v1/tracking_feeds?limit=100', { headers: bearer(key) });
    expect(list.body.data.map((feed: { id: string }) => feed.id)).toContain(res.body.id);
    expect(list.text + (await request(h.baseUrl, `/v1/tracking_feeds/${res.body.id}`, { headers: bearer(key) })).text).not.toContain(
      SECRET,
    );
  });

  it('refuses an EasyPost feed without a secret, naming secret', async () => {
    const res = await request(h.baseUrl, '/v1/tracking_feeds', { headers: bearer(key), body: { provider: 'easypost' } });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^secret: /);
  });

  it('takes an EasyPost webhook secret that is not ASCII, and checks signatures keyed with its NFKD form', async () => {
    // EasyPost's own library keys the HMAC with secret.normalize('NFKD') for exactly such secrets.
    const secret = 'sécret-ﬁ-Ⅻ-webhook';
    const created = await request(h.baseUrl, '/v1/tracking_feeds', { headers: bearer(key), body: { provider: 'easypost', secret } });
    expect(created.status).toBe(201);
    const feed: CreatedFeed = { id: created.body.id, url: created.body.url, secret };
    const raw = easyPostBody(trackingNumber(), [{ status: 'in_transit', datetime: ago(HOUR) }]);
    expect((await postInbound(h.baseUrl, 'easypost', feed, raw)).status).toBe(200);
    const unnormalised = `hmac-sha256-hex=${createHmac('sha256', secret).update(raw).digest('hex')}`;
    expect((await postInbound(h.baseUrl, 'easypost', feed, raw, { headers: { 'x-hmac-signature': unnormalised } })).status).toBe(401);
  });

  it('refuses a Ship24 secret it could not receive in an Authorization header, naming secret', async () => {
    const res = await request(h.baseUrl, '/v1/tracking_feeds', { headers: bearer(key), body: { provider: 'ship24', secret: 'sécret-webhook' } }); // prettier-ignore
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^secret: /);
    const feed = await createFeed(h.baseUrl, key, 'ship24', SECRET);
    const patched = await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}`, { method: 'PATCH', headers: bearer(key), body: { secret: 'sécret-webhook' } }); // prettier-ignore
    expect(patched.status).toBe(400);
    expect(patched.body.message).toMatch(/^secret: /);
  });

  it("shows a Shippo feed's generated token once, in the create answer's url", async () => {
    const res = await request(h.baseUrl, '/v1/tracking_feeds', { headers: bearer(key), body: { provider: 'shippo' } });
    expect(res.status).toBe(201);
    const token = new URL(res.body.url).searchParams.get('token')!;
    expect(Buffer.from(token, 'base64url').length).toBeGreaterThanOrEqual(16);
    const again = await request(h.baseUrl, `/v1/tracking_feeds/${res.body.id}`, { headers: bearer(key) });
    expect(again.body.url).not.toContain('token');
    expect(again.text).not.toContain(token);
  });

  it('answers 403 to a key without events:write', async () => {
    const res = await request(h.baseUrl, '/v1/tracking_feeds', { headers: bearer(readOnlyKey) });
    expect(res.status).toBe(403);
  });

  it("sets the description with PATCH, and shows the test key's feeds only to test keys", async () => {
    const feed = await createFeed(h.baseUrl, testKey, 'ship24', SECRET);
    const patched = await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}`, { method: 'PATCH', headers: bearer(testKey), body: { description: 'Ship24' } }); // prettier-ignore
    expect(patched.status).toBe(200);
    expect(patched.body.description).toBe('Ship24');
    expect((await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}`, { headers: bearer(key) })).status).toBe(404);
  });
});

describe('the inbound endpoint', () => {
  it('answers HEAD with 200 for a live feed', async () => {
    const feed = await createFeed(h.baseUrl, key, 'ship24', SECRET);
    expect((await request(h.baseUrl, `/v1/inbound/${feed.id}`, { method: 'HEAD' })).status).toBe(200);
  });

  it("answers 405 with Allow to any other method on the URL, not an API key's 401", async () => {
    const feed = await createFeed(h.baseUrl, key, 'ship24', SECRET);
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const res = await request(h.baseUrl, `/v1/inbound/${feed.id}`, { method });
      expect([res.status, res.body.error]).toEqual([405, 'method_not_allowed']);
      expect(res.headers.allow).toMatch(/HEAD/);
      expect(res.headers.allow).toMatch(/POST/);
    }
  });

  it('answers 401 to a wrong or missing signature, stores nothing and counts it', async () => {
    const number = trackingNumber();
    const id = await register(key, { tracking_number: number, dispatch_date: ago(48 * HOUR) });
    const feed = await createFeed(h.baseUrl, key, 'easypost', SECRET);
    const raw = easyPostBody(number, [{ status: 'in_transit', datetime: ago(HOUR) }]);
    const wrong = await postInbound(h.baseUrl, 'easypost', feed, raw, {
      headers: { 'x-hmac-signature': `hmac-sha256-hex=${'0'.repeat(64)}` },
    });
    const missing = await postInbound(h.baseUrl, 'easypost', feed, raw, { headers: {} });
    expect([wrong.status, missing.status]).toEqual([401, 401]);
    expect(wrong.body.error).toBe('unauthorized');
    expect(await eventsOf(id)).toEqual([]);
    // Counted within a second (api/feed-counts.ts), and last_received_at stays unset: no request was authenticated.
    await until(async () => (await feedOf(feed)).counts.unauthorized === 2, 'the two 401s counted', 10_000);
    expect((await feedOf(feed)).counts).toMatchObject({ received: 0, unauthorized: 2 });
    expect((await feedOf(feed)).last_received_at).toBeNull();
    const metrics = (await request(h.baseUrl, '/metrics')).text;
    expect(metrics).toMatch(/cds_feed_requests_total\{provider="easypost",outcome="unauthorized"\} [1-9]/);
  });

  it('drops the counts it holds for a feed `issuer erase` removed, instead of failing their write every second for ever', async () => {
    // Re-added after every failed write, they failed the foreign key to tracking_feeds (23503) each time.
    const issuerId = await h.createIssuer('Feed Counts Erased Issuer');
    const feed = await createFeed(h.baseUrl, (await h.createKey(issuerId)).key, 'easypost', SECRET);
    await eraseIssuerRows(h.pool, issuerId);
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString('utf8')), done()) });
    const counter = new FeedCounter(h.pool, pino({ level: 'trace' }, sink));
    try {
      counter.add(feed.id, { received: 1, applied: 1 }, true);
      await counter.flush();
      const written = lines.length;
      await counter.flush();
      expect(lines.length).toBe(written);
      expect(lines.map((line) => JSON.parse(line).level)).not.toContain(40);
    } finally {
      await counter.close();
    }
  });

  it('stamps last_received_at for an authenticated request even when a 401 for the same feed comes within the same second', async () => {
    const feed = await createFeed(h.baseUrl, key, 'easypost', SECRET);
    const raw = easyPostBody(trackingNumber(), []);
    expect((await postInbound(h.baseUrl, 'easypost', feed, raw)).status).toBe(200);
    expect((await postInbound(h.baseUrl, 'easypost', feed, raw, { headers: {} })).status).toBe(401);
    await until(async () => (await feedOf(feed)).counts.unauthorized === 1, 'the 401 counted', 10_000);
    expect((await feedOf(feed)).last_received_at).not.toBeNull();
  });

  it('stamps last_received_at for a request whose signature was right but whose body is refused with 400', async () => {
    const feed = await createFeed(h.baseUrl, key, 'easypost', SECRET);
    expect((await postInbound(h.baseUrl, 'easypost', feed, JSON.stringify({ object: 'Event' }))).status).toBe(400);
    await until(async () => (await feedOf(feed)).last_received_at !== null, 'last_received_at stamped', 5_000);
  });

  it('answers 404 once the feed is revoked, to POST and HEAD', async () => {
    const feed = await createFeed(h.baseUrl, key, 'easypost', SECRET);
    expect((await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}`, { method: 'DELETE', headers: bearer(key) })).status).toBe(204);
    const raw = easyPostBody(trackingNumber(), [{ status: 'in_transit', datetime: ago(HOUR) }]);
    expect((await postInbound(h.baseUrl, 'easypost', feed, raw)).status).toBe(404);
    expect((await request(h.baseUrl, `/v1/inbound/${feed.id}`, { method: 'HEAD' })).status).toBe(404);
  });

  it("answers 400 naming the field to a signed body that is not the provider's shape", async () => {
    const feed = await createFeed(h.baseUrl, key, 'easypost', SECRET);
    const raw = JSON.stringify({
      object: 'Event',
      description: 'tracker.updated',
      result: { object: 'Tracker', id: 'trk_1', tracking_details: [] },
    });
    const res = await postInbound(h.baseUrl, 'easypost', feed, raw);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('bad_request');
    // Named once, first, as every 400 of the API names its field.
    expect(res.body.message).toMatch(/^result\.tracking_code: /);
    expect(res.body.message.split('tracking_code')).toHaveLength(2);
  });

  it('answers 400 naming the field to a signed body holding half of a surrogate pair alone (its jsonb write failed: a 500)', async () => {
    const feed = await createFeed(h.baseUrl, key, 'easypost', SECRET);
    const raw = easyPostBody(trackingNumber(), [{ status: 'in_transit', datetime: ago(HOUR) }]).replace(
      '"Springfield"',
      '"Springfield\\ud83c"',
    );
    const res = await postInbound(h.baseUrl, 'easypost', feed, raw);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'bad_request',
      message: 'result.tracking_details.0.tracking_location.city: must not contain unpaired surrogates (U+D800–U+DFFF alone)',
    });
  });

  it('takes checkpoint times written with a leap second or a lower-case "t" and "z" (a 400 would refuse every later webhook, which resends them)', async () => {
    const number = trackingNumber();
    const id = await register(key, { tracking_number: number, carrier: 'usps', dispatch_date: ago(72 * HOUR) });
    const feed = await createFeed(h.baseUrl, key, 'easypost', SECRET);
    const day = ago(48 * HOUR).slice(0, 10);
    const lastHour = ago(HOUR).slice(0, 19);
    const raw = easyPostBody(number, [
      { status: 'in_transit', datetime: `${day}T23:59:60Z` },
      { status: 'out_for_delivery', datetime: `${lastHour.replace('T', 't')}z` },
    ]);
    const res = await postInbound(h.baseUrl, 'easypost', feed, raw);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: 2, applied: 2, duplicate: 0, unmatched: 0, ignored: 0 });
    await until(async () => (await statusOf(id)) === 'out_for_delivery', 'the card out for delivery', 20_000);
    const times = (await eventsOf(id)).map((event) => event.occurred_at).sort();
    expect(times).toEqual([`${day}T23:59:59.999Z`, `${lastHour}.000Z`]);
  });

  it('reads a checkpoint at 24:00 (ISO 8601 end of day) as 00:00 of the next day, keeping the time as sent on the carrier event', async () => {
    const number = trackingNumber();
    const id = await register(key, { tracking_number: number, carrier: 'usps', dispatch_date: ago(96 * HOUR) });
    const feed = await createFeed(h.baseUrl, key, 'easypost', SECRET);
    const day = ago(72 * HOUR).slice(0, 10);
    const next = new Date(Date.parse(`${day}T00:00:00Z`) + 24 * HOUR).toISOString();
    const res = await postInbound(h.baseUrl, 'easypost', feed, easyPostBody(number, [{ status: 'in_transit', datetime: `${day}T24:00:00Z` }])); // prettier-ignore
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: 1, applied: 1, duplicate: 0, unmatched: 0, ignored: 0 });
    await until(async () => (await statusOf(id)) === 'in_transit', 'the card in transit', 20_000);
    expect(await eventsOf(id)).toEqual([expect.objectContaining({ occurred_at: next, original: expect.objectContaining({ time: `${day}T24:00:00Z` }) })]); // prettier-ignore
  });

  it("applies a Delivered dated only with today's date, received before noon there (its noon lies in the future), at the time received", async () => {
    // Dropped as out_of_bounds before: noon of the date in the zone was after now + 15 minutes, and
    // after Delivered the provider usually sends nothing more, so the card never showed delivered.
    const now = new Date();
    const [alpha3, zone] = Object.values(COUNTRY_ZONES).find(([, zone]) => Number(wallClock(now, zone).slice(11, 13)) < 11)!;
    const today = wallClock(now, zone).slice(0, 10);
    const number = `AS${Math.floor(Math.random() * 1e12)}`;
    const id = await register(key, { tracking_number: number, dispatch_date: ago(48 * HOUR) });
    const feed = await createFeed(h.baseUrl, key, 'aftership', SECRET);
    const raw = JSON.stringify({
      event: 'tracking_update',
      ts: Math.floor(now.getTime() / 1000),
      msg: {
        id: `as-${number}`,
        tracking_number: number,
        slug: 'dhl',
        checkpoints: [{ checkpoint_time: today, tag: 'Delivered', subtag: 'Delivered_001', country_region: alpha3, message: 'Delivered' }],
      },
    });
    const res = await postInbound(h.baseUrl, 'aftership', feed, raw);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: 1, applied: 1, duplicate: 0, unmatched: 0, ignored: 0 });
    await until(async () => (await statusOf(id)) === 'delivered', 'the card delivered', 20_000);
    const [event] = await eventsOf(id);
    expect(Date.parse(event!.occurred_at)).toBeGreaterThanOrEqual(now.getTime() - 1000);
    expect(Date.parse(event!.occurred_at)).toBeLessThanOrEqual(Date.now());
    expect(event!.original).toMatchObject({ vocabulary: 'aftership', status: 'Delivered', time: today });
  });

  it("ignores, and lists with why, a checkpoint whose time cannot be read or whose status is empty or not storable text, and takes the body's others", async () => {
    const number = trackingNumber();
    const id = await register(key, { tracking_number: number, carrier: 'usps', dispatch_date: ago(72 * HOUR) });
    const feed = await createFeed(h.baseUrl, key, 'easypost', SECRET);
    const raw = easyPostBody(number, [
      { status: 'in_transit', datetime: 'yesterday\u0000' },
      { status: '', datetime: ago(3 * HOUR) },
      { status: 'new\u0000status', datetime: ago(2 * HOUR) },
      { status: 'out_for_delivery', datetime: ago(HOUR), status_detail: 'out\u0000for_delivery' },
    ]);
    const res = await postInbound(h.baseUrl, 'easypost', feed, raw);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: 4, applied: 1, duplicate: 0, unmatched: 0, ignored: 3 });
    await until(async () => (await statusOf(id)) === 'out_for_delivery', 'the card out for delivery', 20_000);
    const listed = (await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}/ignored`, { headers: bearer(key) })).body.data;
    const rows = listed.map((row: Record<string, unknown>) => [row.reason, row.status, row.time, row.message]).sort();
    expect(rows).toEqual([
      ['no_status_mapping', '', expect.any(String), expect.any(String)],
      ['no_status_mapping', 'new status', expect.any(String), expect.any(String)],
      ['no_time', 'in_transit', 'yesterday ', expect.stringMatching(/cannot be read/)],
    ]);
    expect((await postInbound(h.baseUrl, 'easypost', feed, raw)).body).toEqual({ received: 4, applied: 0, duplicate: 1, unmatched: 0, ignored: 3 }); // prettier-ignore
  });

  it('takes a tracking number with a control character in it (Postgres text cannot hold U+0000: a 500 the provider would retry for days)', async () => {
    const feed = await createFeed(h.baseUrl, key, 'easypost', SECRET);
    const res = await postInbound(h.baseUrl, 'easypost', feed, easyPostBody(`CTL\u0000${Math.floor(Math.random() * 1e9)}`, [{ status: 'in_transit', datetime: ago(HOUR) }])); // prettier-ignore
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ received: 1, unmatched: 1 });
  });

  it('answers 413 to a body over 2 MiB', async () => {
    const feed = await createFeed(h.baseUrl, key, 'ship24', SECRET);
    const res = await postInbound(h.baseUrl, 'ship24', feed, JSON.stringify({ pad: 'x'.repeat(2 * 1024 * 1024) }));
    expect(res.status).toBe(413);
  });

  it('takes a body twenty times the fixtures’ size that the provider gave up on: its retry, during and after, loses and doubles nothing', async () => {
    const number = trackingNumber();
    const id = await register(key, { tracking_number: number, carrier: 'usps', dispatch_date: ago(6 * 24 * HOUR) });
    const feed = await createFeed(h.baseUrl, key, 'easypost', SECRET);
    const first = Date.now() - 5 * 24 * HOUR;
    const scans = Array.from({ length: 1000 }, (_, i) => ({ status: 'in_transit', datetime: new Date(first + i * 60_000).toISOString() }));
    const raw = easyPostBody(number, [...scans, { status: 'delivered', datetime: ago(HOUR) }]);
    // The provider's client times out before the service has taken 1,001 new checkpoints
    // (docs/tracking-feeds.md "Inbound": each is logged and signalled before the answer), and sends
    // the same body again at once, while the first request is still at work.
    const sign = signed('easypost', raw, feed);
    await fetch(`${h.baseUrl}/v1/inbound/${feed.id}${sign.query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...sign.headers },
      body: raw,
      signal: AbortSignal.timeout(500),
    }).catch(() => undefined);
    const retry = await postInbound(h.baseUrl, 'easypost', feed, raw);
    expect(retry.status).toBe(200);
    expect(retry.body.received).toBe(1001);
    expect(retry.body.applied + retry.body.duplicate).toBe(1001);

    await until(async () => (await statusOf(id)) === 'delivered', 'the card delivered', 60_000);
    const again = await postInbound(h.baseUrl, 'easypost', feed, raw);
    expect(again.body).toEqual({ received: 1001, applied: 0, duplicate: 1001, unmatched: 0, ignored: 0 });
    let logged = 0;
    for (let cursor = ''; ;) {
      const page = await request(h.baseUrl, `/v1/dispatches/${id}/events?limit=100${cursor}`, { headers: bearer(key) });
      logged += page.body.data.length;
      if (!page.body.next_cursor) break;
      cursor = `&cursor=${page.body.next_cursor}`;
    }
    expect(logged).toBe(1001);
    await until(() => webhooksOf(id).some((w) => w.data.status === 'delivered'), 'the delivered webhook', 20_000);
    const statuses = webhooksOf(id).map((w) => w.data.status);
    expect(new Set(statuses).size).toBe(statuses.length);
  }, 120_000);

  it('takes two webhooks of one tracking sent at once with its history in opposite orders: both 200, each checkpoint kept once', async () => {
    // Providers send tracker.created and tracker.updated (or a retry after a timeout) at the same
    // moment, and do not promise the order of a history. Kept rows written in opposite orders by two
    // statements at once deadlocked in Postgres: one answered 500.
    const feed = await createFeed(h.baseUrl, key, 'easypost', SECRET);
    const number = trackingNumber();
    const first = Date.now() - 3 * 24 * HOUR;
    const scans = Array.from({ length: 1500 }, (_, i) => ({
      status: i % 2 === 0 ? 'unknown' : 'in_transit',
      datetime: new Date(first + i * 60_000).toISOString(),
    }));
    for (let round = 0; round < 3; round += 1) {
      const tracking = `${number}${round}`;
      const answers = await Promise.all([
        postInbound(h.baseUrl, 'easypost', feed, easyPostBody(tracking, scans)),
        postInbound(h.baseUrl, 'easypost', feed, easyPostBody(tracking, [...scans].reverse())),
      ]);
      expect(answers.map((res) => res.status)).toEqual([200, 200]);
      for (const res of answers) expect(res.body).toEqual({ received: 1500, applied: 0, duplicate: 0, unmatched: 750, ignored: 750 });
    }
    const listed = async (list: string) => {
      let count = 0;
      for (let cursor = ''; ;) {
        const page = await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}/${list}?limit=100${cursor}`, { headers: bearer(key) });
        count += page.body.data.length;
        if (!page.body.next_cursor) return count;
        cursor = `&cursor=${page.body.next_cursor}`;
      }
    };
    expect(await listed('unmatched')).toBe(3 * 750);
    expect(await listed('ignored')).toBe(3 * 750);
  }, 120_000);

  it('takes the same webhook delivered twice at once: both 200, each checkpoint applied by one of them, each change one webhook', async () => {
    const number = trackingNumber();
    const id = await register(key, { tracking_number: number, carrier: 'usps', dispatch_date: ago(4 * 24 * HOUR) });
    const feed = await createFeed(h.baseUrl, key, 'easypost', SECRET);
    const first = Date.now() - 3 * 24 * HOUR;
    const scans = Array.from({ length: 200 }, (_, i) => ({ status: 'in_transit', datetime: new Date(first + i * 60_000).toISOString() }));
    const raw = easyPostBody(number, [{ status: 'pre_transit', datetime: ago(3.5 * 24 * HOUR) }, ...scans, { status: 'delivered', datetime: ago(HOUR) }]); // prettier-ignore
    const answers = await Promise.all([postInbound(h.baseUrl, 'easypost', feed, raw), postInbound(h.baseUrl, 'easypost', feed, raw)]);
    expect(answers.map((res) => res.status)).toEqual([200, 200]);
    for (const res of answers) expect(res.body.applied + res.body.duplicate).toBe(202);
    expect(answers[0].body.applied + answers[1].body.applied).toBe(202);
    await until(async () => (await statusOf(id)) === 'delivered', 'the card delivered', 30_000);
    await until(() => webhooksOf(id).some((w) => w.data.status === 'delivered'), 'the delivered webhook', 20_000);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const statuses = webhooksOf(id).map((w) => w.data.status);
    expect(new Set(statuses).size).toBe(statuses.length);
    await until(async () => (await feedOf(feed)).counts.applied === 202, 'the counts written', 5_000);
    expect((await feedOf(feed)).counts).toMatchObject({ received: 404, applied: 202, duplicate: 202 });
  }, 60_000);

  it('takes one tracking of 5,000 checkpoints, a body near 2 MiB, in one request: each applied once, each change one webhook', async () => {
    const number = trackingNumber();
    const id = await register(key, { tracking_number: number, carrier: 'usps', dispatch_date: ago(6 * 24 * HOUR) });
    const feed = await createFeed(h.baseUrl, key, 'easypost', SECRET);
    const first = Date.now() - 5 * 24 * HOUR;
    const scans = Array.from({ length: 4999 }, (_, i) => ({ status: 'in_transit', datetime: new Date(first + i * 60_000).toISOString() }));
    const raw = easyPostBody(number, [...scans, { status: 'delivered', datetime: ago(HOUR) }]);
    expect(raw.length).toBeGreaterThan(1.25 * 1024 * 1024);
    expect(raw.length).toBeLessThan(2 * 1024 * 1024);
    // About 3 s on the shared 2-core test machine, 80 s before checkpoints went a chunk per signal (docs/tracking-feeds.md "Inbound").
    const res = await postInbound(h.baseUrl, 'easypost', feed, raw);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: 5000, applied: 5000, duplicate: 0, unmatched: 0, ignored: 0 });
    await until(async () => (await statusOf(id)) === 'delivered', 'the card delivered', 30_000);
    await until(() => webhooksOf(id).some((w) => w.data.status === 'delivered'), 'the delivered webhook', 20_000);
    const statuses = webhooksOf(id).map((w) => w.data.status);
    expect(new Set(statuses).size).toBe(statuses.length);
    expect(statuses.at(-1)).toBe('delivered');
    expect((await postInbound(h.baseUrl, 'easypost', feed, raw)).body).toEqual({ received: 5000, applied: 0, duplicate: 5000, unmatched: 0, ignored: 0 }); // prettier-ignore
  }, 60_000);

  it('refuses the old secret and takes the new one on every API process within API_KEY_CACHE_TTL_MS of a PATCH, and answers 404 as soon after a DELETE', async () => {
    const other = await h.startExtraApi({});
    const feed = await createFeed(h.baseUrl, key, 'ship24', SECRET);
    const NEW = 'whsec-feeds-rotated-9876543210';
    const send = (baseUrl: string, secret: string) =>
      request(baseUrl, `/v1/inbound/${feed.id}`, { headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body: '{"trackings":[]}' }); // prettier-ignore
    // Both processes hold the feed with its first secret.
    expect((await send(h.baseUrl, SECRET)).status).toBe(200);
    expect((await send(other.baseUrl, SECRET)).status).toBe(200);
    const bound = h.config.API_KEY_CACHE_TTL_MS + 1000;

    const patched = Date.now();
    expect((await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}`, { method: 'PATCH', headers: bearer(key), body: { secret: NEW } })).status).toBe(200); // prettier-ignore
    expect((await send(h.baseUrl, SECRET)).status).toBe(401);
    expect((await send(h.baseUrl, NEW)).status).toBe(200);
    await until(
      async () => (await send(other.baseUrl, NEW)).status === 200 || undefined,
      'the new secret taken by the other process',
      bound,
    );
    expect((await send(other.baseUrl, SECRET)).status).toBe(401);
    expect(Date.now() - patched).toBeLessThan(bound);

    const revoked = Date.now();
    expect((await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}`, { method: 'DELETE', headers: bearer(key) })).status).toBe(204);
    expect((await send(h.baseUrl, NEW)).status).toBe(404);
    await until(async () => (await send(other.baseUrl, NEW)).status === 404 || undefined, 'the other process answering 404', bound);
    expect(Date.now() - revoked).toBeLessThan(bound);
  });

  it('answers 429 with Retry-After past FEED_RATE_PER_MINUTE for the feed', async () => {
    const limited = await h.startExtraApi({ FEED_RATE_PER_MINUTE: '2' });
    const feed = await createFeed(h.baseUrl, key, 'ship24', SECRET);
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 3; i += 1) {
      last = await request(limited.baseUrl, `/v1/inbound/${feed.id}`, { headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' }, body: '{"events":[]}' }); // prettier-ignore
      statuses.push(last.status);
    }
    expect(statuses[2]).toBe(429);
    expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0);
    expect(last!.headers['x-ratelimit-limit']).toBe('2');
    expect(last!.headers['x-ratelimit-remaining']).toBe('0');
  });

  it("counts unsigned requests in a window of their own, so they never use up the provider's: its signed request still gets through", async () => {
    const limited = await h.startExtraApi({ FEED_RATE_PER_MINUTE: '2' });
    const feed = await createFeed(h.baseUrl, key, 'ship24', SECRET);
    const send = (authorization: string) =>
      request(limited.baseUrl, `/v1/inbound/${feed.id}`, { headers: { authorization, 'content-type': 'application/json' }, body: '{"trackings":[]}' }); // prettier-ignore
    const unsigned = [];
    for (let i = 0; i < 4; i += 1) unsigned.push(await send('Bearer not-the-secret'));
    expect(unsigned.map((res) => res.status)).toEqual([401, 401, 429, 429]);
    expect(Number(unsigned[2].headers['retry-after'])).toBeGreaterThan(0);
    const signed = await send(`Bearer ${SECRET}`);
    expect(signed.status).toBe(200);
    expect(signed.headers['x-ratelimit-limit']).toBe('2');
    expect(signed.headers['x-ratelimit-remaining']).toBe('1');
  });

  it("carries the feed window's X-RateLimit-* headers on its answers, as every /v1 response does", async () => {
    const feed = await createFeed(h.baseUrl, key, 'easypost', SECRET);
    const raw = easyPostBody(trackingNumber(), []);
    const ok = await postInbound(h.baseUrl, 'easypost', feed, raw);
    const unauthorized = await postInbound(h.baseUrl, 'easypost', feed, raw, { headers: {} });
    for (const res of [ok, unauthorized]) {
      expect(res.headers['x-ratelimit-limit']).toBe(String(h.config.FEED_RATE_PER_MINUTE));
      expect(Number(res.headers['x-ratelimit-remaining'])).toBeLessThan(h.config.FEED_RATE_PER_MINUTE);
      expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000);
    }
  });

  it('carries X-RateLimit-* on every other answer too: HEAD, 413, 405 and 404 (unknown feed: the client IP window)', async () => {
    const feed = await createFeed(h.baseUrl, key, 'ship24', SECRET);
    const answers = {
      head: await request(h.baseUrl, `/v1/inbound/${feed.id}`, { method: 'HEAD' }),
      tooLarge: await postInbound(h.baseUrl, 'ship24', feed, JSON.stringify({ pad: 'x'.repeat(2 * 1024 * 1024) })),
      get: await request(h.baseUrl, `/v1/inbound/${feed.id}`, { method: 'GET' }),
      unknown: await request(h.baseUrl, '/v1/inbound/fd_0000000000000000', { method: 'POST', body: {} }),
    };
    expect(Object.values(answers).map((res) => res.status)).toEqual([200, 413, 405, 404]);
    for (const [name, res] of Object.entries(answers)) {
      expect([name, Number(res.headers['x-ratelimit-limit']) > 0]).toEqual([name, true]);
      expect([name, Number(res.headers['x-ratelimit-remaining']) >= 0]).toEqual([name, true]);
      expect([name, Number(res.headers['x-ratelimit-reset']) > Date.now() / 1000]).toEqual([name, true]);
    }
  });
});

describe('matching a tracking to a dispatch', () => {
  it('applies a checkpoint to the dispatch with the tracking number, whatever its spacing and case', async () => {
    const number = `ez${Math.floor(Math.random() * 1e12)}`;
    const id = await register(key, { tracking_number: number, carrier: 'usps', dispatch_date: ago(48 * HOUR) });
    const feed = await createFeed(h.baseUrl, key, 'easypost', SECRET);
    const raw = easyPostBody(` ${number.toUpperCase().replace(/(\d{4})/, '$1 ')}`, [{ status: 'in_transit', datetime: ago(HOUR) }]);
    const res = await postInbound(h.baseUrl, 'easypost', feed, raw);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: 1, applied: 1, duplicate: 0, unmatched: 0, ignored: 0 });
    await until(async () => (await statusOf(id)) === 'in_transit', 'the card in transit', 20_000);
    expect((await eventsOf(id))[0].original).toMatchObject({ vocabulary: 'easypost', status: 'in_transit' });
  });

  it('never lets a test feed touch a live dispatch with the same tracking number', async () => {
    const number = trackingNumber();
    const live = await register(key, { tracking_number: number, dispatch_date: ago(48 * HOUR) });
    const feed = await createFeed(h.baseUrl, testKey, 'easypost', SECRET);
    const res = await postInbound(h.baseUrl, 'easypost', feed, easyPostBody(number, [{ status: 'in_transit', datetime: ago(HOUR) }]));
    expect(res.body).toMatchObject({ received: 1, applied: 0, unmatched: 1 });
    expect(await eventsOf(live)).toEqual([]);
  });

  it('lists a checkpoint that arrives before registration as unmatched, and applies it at registration (its webhook fires then)', async () => {
    const number = trackingNumber();
    const feed = await createFeed(h.baseUrl, key, 'easypost', SECRET);
    const res = await postInbound(h.baseUrl, 'easypost', feed, easyPostBody(number, [{ status: 'out_for_delivery', datetime: ago(HOUR) }]));
    expect(res.body).toMatchObject({ received: 1, unmatched: 1 });
    const listed = await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}/unmatched`, { headers: bearer(key) });
    expect(listed.body.data).toEqual([
      { tracking_number: number.replace(/\s/g, ''), carrier: 'usps', status: 'out_for_delivery', occurred_at: expect.any(String), received_at: expect.any(String) }, // prettier-ignore
    ]);

    const id = await register(key, { tracking_number: number, dispatch_date: ago(48 * HOUR) });
    await until(async () => (await statusOf(id)) === 'out_for_delivery', 'the kept checkpoint applied', 20_000);
    await until(() => webhooksOf(id).find((w) => w.data.status === 'out_for_delivery'), 'its status.updated webhook', 20_000);
    expect((await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}/unmatched`, { headers: bearer(key) })).body.data).toEqual([]);
  });

  it('ignores, and keeps nowhere, the checkpoints of a dispatch erased before they came (named by its reference)', async () => {
    const id = await register(key, { dispatch_date: ago(48 * HOUR) });
    expect((await request(h.baseUrl, `/v1/dispatches/${id}`, { method: 'DELETE', headers: bearer(key) })).status).toBe(202);
    await until(async () => (await statusOf(id)) === undefined, 'the dispatch erased', 60_000);
    const feed = await createFeed(h.baseUrl, key, 'shippo');
    const raw = fixtureText('shippo', { reference: id, trackingNumber: `ERASED${Math.floor(Math.random() * 1e9)}`, endBefore: new Date() });
    const res = await postInbound(h.baseUrl, 'shippo', feed, raw);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ applied: 0, unmatched: 0, duplicate: 0 });
    expect(res.body.ignored).toBe(res.body.received);
    expect((await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}/unmatched`, { headers: bearer(key) })).body.data).toEqual([]);
  }, 90_000);

  it('ignores, and keeps nowhere, the checkpoints of a dispatch erased before they came, named only by its tracking number', async () => {
    const number = trackingNumber();
    const id = await register(key, { tracking_number: number, dispatch_date: ago(48 * HOUR) });
    const erasure = await request(h.baseUrl, `/v1/dispatches/${id}`, { method: 'DELETE', headers: bearer(key) });
    expect(erasure.status).toBe(202);
    const erasureOf = () => request(h.baseUrl, `/v1/erasures/${erasure.body.id}`, { headers: bearer(key) });
    await until(async () => (await erasureOf()).body.status === 'completed', 'the erasure completed', 60_000);
    const feed = await createFeed(h.baseUrl, key, 'easypost', SECRET);
    // One checkpoint that would be kept as unmatched, one that would be listed as ignored (EasyPost's `unknown`).
    const body = easyPostBody(number, [
      { status: 'unknown', datetime: ago(3 * HOUR) },
      { status: 'in_transit', datetime: ago(HOUR) },
    ]);
    const res = await postInbound(h.baseUrl, 'easypost', feed, body);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ received: 2, applied: 0, unmatched: 0, duplicate: 0, ignored: 2 });
    expect((await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}/unmatched`, { headers: bearer(key) })).body.data).toEqual([]);
    expect((await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}/ignored`, { headers: bearer(key) })).body.data).toEqual([]);
    // Another issuer's card with the same number is not this erasure's: its checkpoint waits as unmatched.
    const otherKey = (await h.createKey(await h.createIssuer('Same Number Issuer'))).key;
    const otherFeed = await createFeed(h.baseUrl, otherKey, 'easypost', SECRET);
    expect((await postInbound(h.baseUrl, 'easypost', otherFeed, body)).body).toMatchObject({ unmatched: 1, ignored: 1 });
  }, 90_000);

  it('applies a checkpoint kept while its dispatch was being registered (the inbound request and the registration race)', async () => {
    // The inbound request finds no dispatch, then (held here) keeps its checkpoint only after the
    // registration has applied the kept ones: without a second look, the checkpoint would wait 30
    // days for a registration that has already happened.
    const number = trackingNumber();
    const feed = await createFeed(h.baseUrl, key, 'easypost', SECRET);
    const feedRow = (await h.pool.query('SELECT issuer_id, mode FROM tracking_feeds WHERE id = $1', [feed.id])).rows[0];
    let kept!: () => void;
    const registered = new Promise<void>((resolve) => (kept = resolve));
    const pool = new Proxy(h.pool, {
      get(target, property, receiver) {
        if (property !== 'query') return Reflect.get(target, property, receiver);
        return async (query: { name?: string }, ...rest: unknown[]) => {
          if (query?.name === 'feed-unmatched-keep-v2') await registered;
          return (target.query as (...args: unknown[]) => unknown).call(target, query, ...rest);
        };
      },
    });
    const ingest = createCarrierEventIngest({ pool: h.pool, temporal: h.temporal, taskQueue: h.taskQueue, workflowOptions: dispatchWorkflowOptions(h.config) }); // prettier-ignore
    const inbound = createFeedIngest({ pool, ingest }).receive({ id: feed.id, issuerId: feedRow.issuer_id, mode: feedRow.mode }, [
      {
        trackingNumber: number,
        carrier: 'usps',
        references: [],
        checkpoints: [
          {
            eventId: `race-${number}`,
            mapped: { status: 'out_for_delivery' },
            original: { vocabulary: 'easypost', status: 'out_for_delivery' },
            time: { kind: 'instant', iso: ago(HOUR), original: ago(HOUR) },
          },
        ],
      },
    ]);
    const id = await register(key, { tracking_number: number, dispatch_date: ago(48 * HOUR) });
    kept();
    expect(await inbound).toMatchObject({ received: 1 });
    await until(async () => (await statusOf(id)) === 'out_for_delivery', 'the raced checkpoint applied', 20_000);
    await until(() => webhooksOf(id).find((w) => w.data.status === 'out_for_delivery'), 'its status.updated webhook', 20_000);
    expect((await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}/unmatched`, { headers: bearer(key) })).body.data).toEqual([]);
  });

  it('never applies a kept checkpoint whose tracking number is blank to a dispatch registered without one', async () => {
    const feed = await createFeed(h.baseUrl, key, 'easypost', SECRET);
    const res = await postInbound(h.baseUrl, 'easypost', feed, easyPostBody(' \u0000 ', [{ status: 'delivered', datetime: ago(HOUR) }]));
    expect(res.body).toMatchObject({ received: 1, unmatched: 1 });
    const id = await register(key, { dispatch_date: ago(48 * HOUR) });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await eventsOf(id)).toEqual([]);
    expect((await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}/unmatched`, { headers: bearer(key) })).body.data).toHaveLength(1);
  });

  it('applies to the one dispatch with the tracking number a checkpoint a few hours before its dispatch date (§6: within the bounds, it counts)', async () => {
    // An acceptance scan at 08:00, the issuer's batch registers the card at 10:00 with dispatch_date
    // = now: one dispatch has the number, so the dispatch-date rule among several does not apply.
    const number = trackingNumber();
    const id = await register(key, { tracking_number: number, dispatch_date: ago(HOUR) });
    const feed = await createFeed(h.baseUrl, key, 'easypost', SECRET);
    const raw = easyPostBody(number, [{ status: 'in_transit', datetime: ago(3 * HOUR) }]);
    expect((await postInbound(h.baseUrl, 'easypost', feed, raw)).body).toEqual({ received: 1, applied: 1, duplicate: 0, unmatched: 0, ignored: 0 }); // prettier-ignore
    await until(async () => (await statusOf(id)) === 'in_transit', 'the card in transit', 20_000);
    expect((await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}/unmatched`, { headers: bearer(key) })).body.data).toEqual([]);
  });

  it('applies at registration a kept checkpoint from a few hours before the dispatch date it registers', async () => {
    const number = trackingNumber();
    const feed = await createFeed(h.baseUrl, key, 'easypost', SECRET);
    const raw = easyPostBody(number, [{ status: 'in_transit', datetime: ago(3 * HOUR) }]);
    expect((await postInbound(h.baseUrl, 'easypost', feed, raw)).body).toMatchObject({ unmatched: 1 });
    const id = await register(key, { tracking_number: number, dispatch_date: ago(HOUR) });
    await until(async () => (await statusOf(id)) === 'in_transit', 'the kept checkpoint applied', 20_000);
    expect((await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}/unmatched`, { headers: bearer(key) })).body.data).toEqual([]);
  });

  it('ignores, and does not keep as unmatched, a checkpoint of the one dispatch with the number that lies before its time bounds', async () => {
    const number = trackingNumber();
    await register(key, { tracking_number: number, dispatch_date: ago(HOUR) });
    const feed = await createFeed(h.baseUrl, key, 'easypost', SECRET);
    const raw = easyPostBody(number, [{ status: 'in_transit', datetime: ago(8 * 24 * HOUR) }]);
    expect((await postInbound(h.baseUrl, 'easypost', feed, raw)).body).toEqual({ received: 1, applied: 0, duplicate: 0, unmatched: 0, ignored: 1 }); // prettier-ignore
    expect((await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}/unmatched`, { headers: bearer(key) })).body.data).toEqual([]);
  });

  it('lists as ignored, and counts, a kept checkpoint that lies outside the time bounds of the dispatch registered for it; a repeated registration lists and counts it once', async () => {
    // Kept as unmatched (no dispatch yet), then registered with a dispatch_date 8 days after it:
    // outside the bounds, it was dropped from the unmatched list and shown nowhere.
    const number = trackingNumber();
    const feed = await createFeed(h.baseUrl, key, 'easypost', SECRET);
    const old = ago(9 * 24 * HOUR);
    const raw = easyPostBody(number, [
      { status: 'in_transit', datetime: old },
      { status: 'out_for_delivery', datetime: ago(HOUR) },
    ]);
    expect((await postInbound(h.baseUrl, 'easypost', feed, raw)).body).toMatchObject({ unmatched: 2, ignored: 0 });
    const id = randomUUID();
    const body = { id, tracking_number: number, dispatch_date: ago(2 * HOUR), destination: { postal_code: '62701', country_code: 'US' } };
    const ignoredMetric = async () => valueOf(await scrape(`${h.baseUrl}/metrics`), 'cds_feed_checkpoints_total', { provider: 'easypost', result: 'ignored' }); // prettier-ignore
    const before = await ignoredMetric();
    expect((await request(h.baseUrl, '/v1/dispatches', { headers: bearer(key), body })).status).toBe(201);
    await until(async () => (await statusOf(id)) === 'out_for_delivery', 'the kept checkpoint in bounds applied', 20_000);
    // Counted in the metric too, under the feed's provider (the registration path knows it from the row it keeps).
    expect(await ignoredMetric()).toBe(before + 1);
    expect((await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}/unmatched`, { headers: bearer(key) })).body.data).toEqual([]);
    const ignoredRows = async () => (await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}/ignored`, { headers: bearer(key) })).body.data;
    expect(await ignoredRows()).toEqual([
      expect.objectContaining({ tracking_number: number.replace(/\s/g, ''), dispatch_id: id, status: 'in_transit', reason: 'out_of_bounds', message: expect.stringMatching(/time bounds/) }), // prettier-ignore
    ]);
    await until(async () => (await feedOf(feed)).counts.ignored === 1, 'the ignored checkpoint counted', 10_000);
    // The issuer retries the registration (as after a lost answer), and, as if the API had died
    // before the kept checkpoints were deleted, they are kept again: applied and listed once each.
    const { rows } = await h.pool.query('SELECT * FROM feed_ignored_checkpoints WHERE feed_id = $1', [feed.id]);
    expect(rows).toHaveLength(1);
    expect((await postInbound(h.baseUrl, 'easypost', feed, easyPostBody(number, [{ status: 'in_transit', datetime: old }]))).body).toMatchObject({ ignored: 1 }); // prettier-ignore
    await h.pool.query(
      `INSERT INTO feed_unmatched_checkpoints (feed_id, issuer_id, mode, tracking_number, carrier, references_, event_id, status, reason, location, time, original)
       SELECT feed_id, issuer_id, mode, tracking_number, carrier, references_, event_id, 'in_transit', NULL, NULL,
              jsonb_build_object('kind', 'instant', 'iso', original_time, 'original', original_time),
              jsonb_build_object('vocabulary', 'easypost', 'status', status)
         FROM feed_ignored_checkpoints WHERE feed_id = $1`,
      [feed.id],
    );
    expect((await request(h.baseUrl, '/v1/dispatches', { headers: bearer(key), body })).status).toBe(200);
    expect(await ignoredRows()).toHaveLength(1);
    expect((await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}/unmatched`, { headers: bearer(key) })).body.data).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // The second inbound request's own ignored checkpoint counts (it is counted per request); the retry adds nothing.
    expect((await feedOf(feed)).counts.ignored).toBe(2);
  });

  it('takes an ignored checkpoint off the ignored list once it applies (its time came later, under the same provider id)', async () => {
    const number = `S24${Math.floor(Math.random() * 1e12)}`;
    const id = await register(key, { tracking_number: number, carrier: 'usps', dispatch_date: ago(48 * HOUR) });
    const feed = await createFeed(h.baseUrl, key, 'ship24', SECRET);
    const body = (occurrenceDatetime?: string) =>
      JSON.stringify({
        trackings: [
          {
            tracker: { trackerId: `tr-${number}`, trackingNumber: number, courierCode: ['usps'] },
            events: [{ eventId: `ev-${number}`, statusMilestone: 'in_transit', ...(occurrenceDatetime ? { occurrenceDatetime } : {}) }],
          },
        ],
      });
    expect((await postInbound(h.baseUrl, 'ship24', feed, body())).body).toMatchObject({ ignored: 1 });
    const ignoredRows = async () => (await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}/ignored`, { headers: bearer(key) })).body.data;
    expect(await ignoredRows()).toEqual([expect.objectContaining({ reason: 'no_time', time: null })]);
    expect((await postInbound(h.baseUrl, 'ship24', feed, body(ago(HOUR)))).body).toMatchObject({ applied: 1, ignored: 0 });
    await until(async () => (await statusOf(id)) === 'in_transit', 'the card in transit', 20_000);
    expect(await ignoredRows()).toEqual([]);
  });

  it('gives a recycled tracking number to the most recent dispatch whose dispatch date is not after the checkpoint', async () => {
    const number = trackingNumber();
    const old = await register(key, { tracking_number: number, dispatch_date: ago(200 * HOUR) });
    const recent = await register(key, { tracking_number: number, dispatch_date: ago(20 * HOUR) });
    const feed = await createFeed(h.baseUrl, key, 'easypost', SECRET);
    // One checkpoint before the recent dispatch left (the old card's), one after (the recent card's).
    const raw = easyPostBody(number, [
      { status: 'in_transit', datetime: ago(150 * HOUR) },
      { status: 'out_for_delivery', datetime: ago(2 * HOUR) },
    ]);
    expect((await postInbound(h.baseUrl, 'easypost', feed, raw)).body).toMatchObject({ applied: 2 });
    await until(async () => (await statusOf(recent)) === 'out_for_delivery', 'the recent card out for delivery', 20_000);
    await until(async () => (await statusOf(old)) === 'in_transit', 'the old card in transit', 20_000);
    expect((await eventsOf(recent)).map((e) => e.status)).toEqual(['out_for_delivery']);
  });
});

describe('the ignored checkpoints list', () => {
  /** A Ship24 webhook (its published tracker webhook shape): one tracking per entry, each event as given. */
  const ship24Body = (trackings: Array<{ number: string; events: Array<Record<string, unknown>> }>) =>
    JSON.stringify({
      trackings: trackings.map(({ number, events }) => ({
        metadata: { topic: 'tracking/update', messageId: randomUUID() },
        tracker: { trackerId: `tr-${number}`, trackingNumber: number, courierCode: ['usps'] },
        events: events.map((event, i) => ({ eventId: `ev-${number}-${i}`, trackingNumber: number, courierCode: 'usps', ...event })),
      })),
    });
  const ignoredOf = async (feed: CreatedFeed, withKey = key) =>
    request(h.baseUrl, `/v1/tracking_feeds/${feed.id}/ignored`, { headers: bearer(withKey) });
  const byEvent = (rows: Array<{ tracking_number: string; reason: string }>) =>
    [...rows].sort((a, b) => `${a.tracking_number}${a.reason}`.localeCompare(`${b.tracking_number}${b.reason}`));

  let feed: CreatedFeed;
  let open: string;
  let openNumber: string;
  let closedNumber: string;
  let closed: string;
  let raw: string;

  beforeAll(async () => {
    openNumber = `IGN${Math.floor(Math.random() * 1e12)}`;
    closedNumber = `IGC${Math.floor(Math.random() * 1e12)}`;
    open = await register(key, { tracking_number: openNumber, carrier: 'usps', dispatch_date: ago(HOUR) });
    closed = await register(key, { tracking_number: closedNumber, carrier: 'usps', dispatch_date: ago(48 * HOUR) });
    await until(async () => (await statusOf(closed)) !== undefined, 'the closed dispatch projected', 20_000);
    await h.temporal.workflow.getHandle(closed).terminate('closed by an operator in a test');
    feed = await createFeed(h.baseUrl, key, 'ship24', SECRET);
    raw = ship24Body([
      {
        number: openNumber,
        events: [
          { statusMilestone: 'pending', statusCode: 'pending', occurrenceDatetime: ago(2 * HOUR).slice(0, 19) + 'Z' },
          { statusMilestone: 'in_transit', statusCode: 'transit' },
          { statusMilestone: 'in_transit', statusCode: 'transit', occurrenceDatetime: '2026-01-02T10:00:00+01:00' },
        ],
      },
      { number: closedNumber, events: [{ statusMilestone: 'in_transit', occurrenceDatetime: ago(HOUR) }] },
    ]);
  }, 60_000);

  it('lists each ignored checkpoint with why: no status mapping, no time, outside the time bounds, the dispatch closed', async () => {
    const res = await postInbound(h.baseUrl, 'ship24', feed, raw);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: 4, applied: 0, duplicate: 0, unmatched: 0, ignored: 4 });
    const listed = await ignoredOf(feed);
    expect(listed.status).toBe(200);
    expect(listed.body.next_cursor).toBeNull();
    const common = { carrier: 'usps', received_at: expect.any(String), message: expect.any(String) };
    expect(byEvent(listed.body.data)).toEqual([
      { ...common, tracking_number: closedNumber, dispatch_id: closed, status: 'in_transit', substatus: null, time: expect.any(String), reason: 'dispatch_closed' }, // prettier-ignore
      { ...common, tracking_number: openNumber, dispatch_id: null, status: 'pending', substatus: 'pending', time: expect.any(String), reason: 'no_status_mapping' }, // prettier-ignore
      { ...common, tracking_number: openNumber, dispatch_id: null, status: 'in_transit', substatus: 'transit', time: null, reason: 'no_time' }, // prettier-ignore
      { ...common, tracking_number: openNumber, dispatch_id: open, status: 'in_transit', substatus: 'transit', time: '2026-01-02T10:00:00+01:00', reason: 'out_of_bounds' }, // prettier-ignore
    ]);
    const outside = listed.body.data.find((row: { reason: string }) => row.reason === 'out_of_bounds');
    expect(outside.message).toMatch(/time bounds/);
  });

  it('lists them once when the provider sends the same body again', async () => {
    // The closed dispatch's checkpoint is logged (effect workflow_closed): seen again, it is a duplicate.
    expect((await postInbound(h.baseUrl, 'ship24', feed, raw)).body).toMatchObject({ received: 4, ignored: 3, duplicate: 1 });
    expect((await ignoredOf(feed)).body.data).toHaveLength(4);
  });

  it("applies the other trackings of a grouped body when one is not Ship24's shape, and lists that one's checkpoints as malformed", async () => {
    // Before: the whole body was refused with 400 naming the bad tracking's field, so Ship24 retried it
    // for days and the well-formed tracking beside it never applied.
    const good = `S24G${Math.floor(Math.random() * 1e12)}`;
    const badNumber = `S24B${Math.floor(Math.random() * 1e12)}`;
    const id = await register(key, { tracking_number: good, carrier: 'usps', dispatch_date: ago(48 * HOUR) });
    const grouped = JSON.parse(
      ship24Body([
        { number: badNumber, events: [{ statusMilestone: 'in_transit', occurrenceDatetime: ago(3 * HOUR) }, { statusMilestone: 'delivered', occurrenceDatetime: ago(2 * HOUR) }] }, // prettier-ignore
        { number: good, events: [{ statusMilestone: 'in_transit', occurrenceDatetime: ago(HOUR) }] },
      ]),
    );
    delete grouped.trackings[0].tracker.trackerId;
    const groupFeed = await createFeed(h.baseUrl, key, 'ship24', SECRET);
    const res = await postInbound(h.baseUrl, 'ship24', groupFeed, JSON.stringify(grouped));
    expect([res.status, res.body]).toEqual([200, { received: 3, applied: 1, duplicate: 0, unmatched: 0, ignored: 2 }]);
    await until(async () => (await statusOf(id)) === 'in_transit', 'the well-formed tracking applied', 20_000);
    const listed = (await ignoredOf(groupFeed)).body.data;
    expect(listed).toEqual([
      expect.objectContaining({ tracking_number: badNumber, dispatch_id: null, reason: 'malformed', message: expect.stringMatching(/trackings\.0\.tracker\.trackerId: is required/) }), // prettier-ignore
      expect.objectContaining({ tracking_number: badNumber, dispatch_id: null, reason: 'malformed' }),
    ]);
    // Sent again (providers retry and resend): listed once, the good checkpoint a duplicate.
    expect((await postInbound(h.baseUrl, 'ship24', groupFeed, JSON.stringify(grouped))).body).toMatchObject({ duplicate: 1, ignored: 2 });
    expect((await ignoredOf(groupFeed)).body.data).toHaveLength(2);
    await until(async () => (await feedOf(groupFeed)).counts.ignored === 4, 'the malformed checkpoints counted', 10_000);
    // The envelope itself not Ship24's shape is still refused, naming the field.
    const envelope = await postInbound(h.baseUrl, 'ship24', groupFeed, JSON.stringify({ trackings: {} }));
    expect([envelope.status, envelope.body.message]).toEqual([400, expect.stringMatching(/^trackings: /)]);
  });

  it("logs which field of the tracking was not Ship24's shape, and nothing of the body", async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString('utf8')), done()) });
    const api = await startApi({ config: h.config, pool: h.pool, temporal: h.temporal, logger: pino({ level: 'trace' }, sink), port: 0, host: '127.0.0.1' }); // prettier-ignore
    const number = `S24LOG${Math.floor(Math.random() * 1e12)}`;
    const events = [{ statusMilestone: 'in_transit', occurrenceDatetime: ago(HOUR), location: 'SECRET-STREET' }];
    const body = JSON.parse(
      ship24Body([
        { number, events },
        { number: `${number}B`, events },
      ]),
    );
    body.trackings[0].tracker.clientTrackerId = 42;
    const logFeed = await createFeed(h.baseUrl, key, 'ship24', SECRET);
    try {
      const res = await postInbound(api.url, 'ship24', logFeed, JSON.stringify(body));
      expect([res.status, res.body.ignored]).toEqual([200, 1]);
      // Its only tracking not Ship24's shape, the body is not Ship24's: a 400 naming the field, nothing logged of it.
      const alone = { trackings: [body.trackings[0]] };
      const refused = await postInbound(api.url, 'ship24', logFeed, JSON.stringify(alone));
      expect([refused.status, refused.body.message]).toEqual([400, expect.stringMatching(/^trackings\.0\.tracker\.clientTrackerId: /)]);
    } finally {
      await api.close();
    }
    const warned = lines.map((line) => JSON.parse(line)).filter((line) => line.field !== undefined);
    expect(warned).toEqual([expect.objectContaining({ level: 40, feed_id: logFeed.id, provider: 'ship24', field: 'trackings.0.tracker.clientTrackerId' })]); // prettier-ignore
    expect(lines.join('')).not.toMatch(new RegExp(`${number}|SECRET-STREET|${SECRET}`));
  });

  it("answers 404 to another issuer's key and to the issuer's test key", async () => {
    const other = (await h.createKey(await h.createIssuer('Another Feeds Issuer'))).key;
    expect((await ignoredOf(feed, other)).status).toBe(404);
    expect((await ignoredOf(feed, testKey)).status).toBe(404);
    expect((await ignoredOf(feed, readOnlyKey)).status).toBe(403);
  });

  it('pages them, newest first, with a cursor it refuses when edited', async () => {
    const first = await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}/ignored?limit=3`, { headers: bearer(key) });
    expect(first.body.data).toHaveLength(3);
    const second = await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}/ignored?limit=3&cursor=${first.body.next_cursor}`, { headers: bearer(key) }); // prettier-ignore
    expect(second.body).toMatchObject({ next_cursor: null });
    expect(byEvent([...first.body.data, ...second.body.data])).toEqual(byEvent((await ignoredOf(feed)).body.data));
    const edited = await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}/ignored?cursor=abc`, { headers: bearer(key) });
    expect([edited.status, edited.body.message]).toEqual([400, expect.stringMatching(/^cursor: /)]);
  });

  it.each([
    ['a day no calendar has', ['2026-02-30T00:00:00.000000Z', 'TN1', 'e1']],
    ['year 0000', ['0000-01-01T00:00:00.000000Z', 'TN1', 'e1']],
    ['a NUL in the tracking number', ['2026-01-01T00:00:00.000000Z', 'T\u0000N', 'e1']],
    ['a NUL in the event id', ['2026-01-01T00:00:00.000000Z', 'TN1', 'e\u0000']],
  ])('refuses a cursor with %s on both lists with 400 naming cursor (not a 500 from Postgres)', async (_name, position) => {
    const cursor = Buffer.from(JSON.stringify(position)).toString('base64url');
    for (const list of ['unmatched', 'ignored']) {
      const res = await request(h.baseUrl, `/v1/tracking_feeds/${feed.id}/${list}?cursor=${cursor}`, { headers: bearer(key) });
      expect([res.status, res.body.message]).toEqual([400, expect.stringMatching(/^cursor: /)]);
    }
  });

  it("keeps nothing of an erased dispatch's checkpoints: its erasure removes those listed, and a later one is not listed", async () => {
    expect((await dispatchFootprint(h.pool, open)).feed_ignored_checkpoints).toBe(3);
    const erasure = await request(h.baseUrl, `/v1/dispatches/${open}`, { method: 'DELETE', headers: bearer(key) });
    expect(erasure.status).toBe(202);
    const erasureOf = () => request(h.baseUrl, `/v1/erasures/${erasure.body.id}`, { headers: bearer(key) });
    await until(async () => (await erasureOf()).body.status === 'completed', 'the erasure completed', 60_000);
    expect((await ignoredOf(feed)).body.data.map((row: { tracking_number: string }) => row.tracking_number)).toEqual([closedNumber]);
    expect((await dispatchFootprint(h.pool, open)).feed_ignored_checkpoints).toBe(0);
    // Named by its reference after the erasure: ignored, and stored nowhere.
    const late = JSON.stringify({
      trackings: [
        {
          tracker: { trackerId: `tr-late-${openNumber}`, trackingNumber: `${openNumber}X`, clientTrackerId: open },
          events: [{ eventId: `late-${openNumber}`, statusMilestone: 'info_received', occurrenceDatetime: ago(HOUR) }],
        },
      ],
    });
    expect((await postInbound(h.baseUrl, 'ship24', feed, late)).body).toMatchObject({ received: 1, ignored: 1 });
    expect((await ignoredOf(feed)).body.data).toHaveLength(1);
  }, 90_000);
});
