// A dispatch whose erasure was requested and has not completed yet (docs/privacy.md "Erasure": from
// the request on, the id is a tombstone for every route), beyond the routes of
// test/api/erasure.test.ts: the events API (GET /v1/events, GET /v1/events/{id}) no longer shows
// its webhook events, with the status record they carry, a replay (POST
// /v1/webhook_endpoints/{id}/replay) does not send them again, the dashboard's delivery log does
// not show the body one carried, its tracking page is not there (404 page, as once its links are
// erased), and a feed's checkpoint naming it by its tracking number is ignored and stored nowhere.
// WEBHOOK_TIMEOUT_MS of 20 s keeps the erasure pending for its wait of WEBHOOK_TIMEOUT_MS + 5 s.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createDashboardUser, setPasswordWithToken } from '../../db/dashboard.js';
import { hashPassword, SET_PASSWORD_LINK_TTL_MS } from '../../dashboard/passwords.js';
import { randomId, startHarness, type Harness } from '../support/harness.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { createFeed, easyPostBody, postInbound } from '../support/tracking-feeds.js';
import { until } from '../support/until.js';
import { bearer, registrationFor, request } from './http.js';

let h: Harness;
let receiver: Receiver;
let key: string;
let issuerId: string;
let endpointId: string;
const call = (method: string, path: string, body?: unknown) => request(h.baseUrl, path, { method, headers: bearer(key), body });

beforeAll(async () => {
  h = await startHarness({ env: { WEBHOOK_TIMEOUT_MS: '20000', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  issuerId = await h.createIssuer('Pending Erasure Events');
  key = (await h.createKey(issuerId)).key;
  receiver = await startReceiver();
  const endpoint = await call('POST', '/v1/webhook_endpoints', { url: receiver.url, events: ['status.updated'] });
  expect(endpoint.status).toBe(201);
  endpointId = endpoint.body.id;
}, 60_000);

afterAll(async () => {
  await receiver?.close();
  await h?.stop();
});

describe('a dispatch whose erasure is pending', () => {
  const erased = randomUUID();
  const kept = randomUUID();
  const erasedNumber = `PENDING ${Math.floor(Math.random() * 1e12)}`;
  let erasedEvent: string;
  let keptEvent: string;
  let since: string;
  const pages: Record<string, string> = {};

  beforeAll(async () => {
    since = new Date(Date.now() - 1_000).toISOString();
    for (const id of [erased, kept]) {
      expect((await call('POST', '/v1/dispatches', registrationFor(id, id === erased ? { tracking_number: erasedNumber } : {}))).status).toBe(201); // prettier-ignore
      expect((await call('POST', `/v1/dispatches/${id}/events`, { status: 'in_transit', occurred_at: new Date().toISOString() })).status).toBe(202); // prettier-ignore
    }
    const eventOf = (id: string) =>
      until(async () => (await call('GET', `/v1/events?dispatch_id=${id}&type=status.updated`)).body.data[0]?.id as string | undefined, `the event of ${id}`); // prettier-ignore
    [erasedEvent, keptEvent] = [await eventOf(erased), await eventOf(kept)];
    await until(() => receiver.requests.length >= 2, 'both webhooks delivered');
    for (const id of [erased, kept]) {
      const link = await call('POST', `/v1/dispatches/${id}/tracking_links`, {});
      expect(link.status).toBe(201);
      pages[id] = new URL(link.body.url).pathname;
      expect((await request(h.baseUrl, pages[id])).status).toBe(200);
    }
    const erasure = await call('DELETE', `/v1/dispatches/${erased}`);
    expect(erasure.status).toBe(202);
    expect(erasure.body.status).toBe('pending');
  }, 60_000);

  it('leaves its webhook events out of GET /v1/events, filtered by the dispatch or not', async () => {
    expect((await call('GET', `/v1/events?dispatch_id=${erased}`)).body.data).toEqual([]);
    const all = (await call('GET', '/v1/events?limit=100')).body.data.map((e: { dispatch_id: string }) => e.dispatch_id);
    expect(all).not.toContain(erased);
    expect(all).toContain(kept);
  });

  it('answers GET /v1/events/{id} of one of its webhook events with 404', async () => {
    expect((await call('GET', `/v1/events/${erasedEvent}`)).status).toBe(404);
    expect((await call('GET', `/v1/events/${keptEvent}`)).status).toBe(200);
  });

  it('answers its tracking page with the 404 page saying it was erased, which shows nothing of it', async () => {
    const page = await request(h.baseUrl, pages[erased]);
    expect(page.status).toBe(404);
    expect(page.text).toContain('Tracking erased');
    expect(page.text).not.toContain('Pending Erasure Events');
    expect((await request(h.baseUrl, pages[kept])).status).toBe(200);
  });

  it("answers the dashboard's delivery detail of one of its webhook events with 404, not with the body it carried", async () => {
    const cookie = await dashboardSession();
    const detail = (eventId: string) =>
      fetch(`${h.baseUrl}/dashboard/webhooks/${endpointId}/deliveries/${eventId}`, { headers: { cookie }, redirect: 'manual' });
    const keptPage = await detail(keptEvent);
    expect(keptPage.status).toBe(200);
    expect(await keptPage.text()).toContain(kept);
    const erasedPage = await detail(erasedEvent);
    expect(erasedPage.status).toBe(404);
    expect(await erasedPage.text()).not.toContain(erased);
  });

  it("ignores a feed's checkpoint naming it only by its tracking number, and keeps it nowhere (DESIGN §11)", async () => {
    // It was kept as unmatched, and listed, until the erasure's rows step: the number's hash was
    // written there, not when the erasure was requested (and a row kept as that step committed stayed 30 days).
    const feed = await createFeed(h.baseUrl, key, 'easypost', 'whsec-pending-erasure-0123');
    const res = await postInbound(h.baseUrl, 'easypost', feed, easyPostBody(erasedNumber, [{ status: 'in_transit', datetime: new Date().toISOString() }])); // prettier-ignore
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: 1, applied: 0, duplicate: 0, unmatched: 0, ignored: 1 });
    for (const list of ['unmatched', 'ignored']) expect((await call('GET', `/v1/tracking_feeds/${feed.id}/${list}`)).body.data).toEqual([]);
  });

  it('does not send its webhook events again in a replay of the endpoint', async () => {
    const before = receiver.requests.length;
    const replay = await call('POST', `/v1/webhook_endpoints/${endpointId}/replay`, { since, until: new Date().toISOString() });
    expect(replay.status).toBe(202);
    expect(replay.body.total).toBe(1);
    await until(async () => (await call('GET', `/v1/replays/${replay.body.id}`)).body.status === 'completed', 'the replay completed');
    const sent = receiver.requests.slice(before).map((r) => JSON.parse(r.body.toString('utf8')).data.id);
    expect(sent).toEqual([kept]);
    const named = await call('POST', `/v1/webhook_endpoints/${endpointId}/replay`, { event_ids: [erasedEvent] });
    expect(named.body.total).toBe(0);
    // Still pending: every answer above was given while the erasure had not completed.
    expect((await call('GET', `/v1/status/${erased}`)).body.message).toMatch(/was erased on/);
    const { rows } = await h.pool.query(`SELECT status FROM erasures WHERE dispatch_id = $1`, [erased]);
    expect(rows[0].status).toBe('pending');
  });
});

/** A dashboard user of the issuer, signed in over HTTP as a browser would: its session cookie. */
async function dashboardSession(): Promise<string> {
  const email = `${randomId('erasure')}@example.test`;
  const password = 'correct horse battery staple';
  const created = await createDashboardUser(h.pool, { issuerId, email, tokenTtlMs: SET_PASSWORD_LINK_TTL_MS });
  if (!created || !(await setPasswordWithToken(h.pool, created.token, await hashPassword(password)))) throw new Error('no user');
  const page = await fetch(`${h.baseUrl}/dashboard/sign-in`);
  const formCookie = page.headers
    .getSetCookie()
    .map((header) => header.split(';')[0])
    .join('; ');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1];
  if (!csrf) throw new Error('no CSRF token on the sign-in page');
  const signedIn = await fetch(`${h.baseUrl}/dashboard/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: formCookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, email, password }).toString(),
  });
  expect(signedIn.status).toBe(303);
  return signedIn.headers
    .getSetCookie()
    .map((header) => header.split(';')[0])
    .join('; ');
}
