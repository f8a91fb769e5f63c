// Tenancy: every dashboard route, given the ids of another issuer's objects, answers the same 404
// page as for ids that do not exist, and changes nothing. Table-driven: a new page adds its routes
// to ROUTES (and the objects it needs to OtherIssuer).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { listApiKeys } from '../../db/issuers.js';
import { bearer, registrationFor, request } from '../api/http.js';
import { createTestEvent, createWebhookEndpoint, findEndpoint } from '../../db/webhook-endpoints.js';
import { createFeed, findIssuerFeed } from '../../db/tracking-feeds.js';
import { createTrackingLink, pageTrackingLinks } from '../../db/tracking-links.js';
import { newTrackingToken } from '../../domain/tracking-links.js';
import { csrfTokenOf, postForm, signIn, startBrowserHarness, type BrowserHarness } from './support.js';

/** Objects that belong to the other issuer. */
interface OtherIssuer {
  issuerId: string;
  apiKeyId: string;
  dispatchId: string;
  endpointId: string;
  eventId: string;
  feedId: string;
  linkId: string;
  /** This issuer's own dispatch: their link id under it must not reach their link. */
  myDispatchId: string;
}

/** What the test names show in place of the ids. */
const PLACEHOLDERS: OtherIssuer = {
  issuerId: ':issuer',
  apiKeyId: ':key',
  dispatchId: ':dispatch',
  endpointId: ':endpoint',
  eventId: ':event',
  feedId: ':feed',
  linkId: ':link',
  myDispatchId: ':my-dispatch',
};

const ROUTES: Array<{ method: 'GET' | 'POST'; path: (other: OtherIssuer) => string; form?: Record<string, string> }> = [
  { method: 'GET', path: (o) => `/dashboard/api-keys/${o.apiKeyId}/revoke` },
  { method: 'POST', path: (o) => `/dashboard/api-keys/${o.apiKeyId}/revoke` },
  { method: 'GET', path: (o) => `/dashboard/dispatches/${o.dispatchId}` },
  // A whole id in the search leads to the dispatch's page, which is the same 404.
  { method: 'GET', path: (o) => `/dashboard/dispatches?id=${o.dispatchId}` },
  { method: 'GET', path: (o) => `/dashboard/webhooks/${o.endpointId}` },
  { method: 'POST', path: (o) => `/dashboard/webhooks/${o.endpointId}/events`, form: { events: 'delivery.completed' } },
  { method: 'POST', path: (o) => `/dashboard/webhooks/${o.endpointId}/disable` },
  { method: 'POST', path: (o) => `/dashboard/webhooks/${o.endpointId}/enable` },
  { method: 'POST', path: (o) => `/dashboard/webhooks/${o.endpointId}/secret` },
  { method: 'GET', path: (o) => `/dashboard/webhooks/${o.endpointId}/rotate` },
  { method: 'POST', path: (o) => `/dashboard/webhooks/${o.endpointId}/rotate`, form: { overlap: '1h', switch: 'end' } },
  { method: 'POST', path: (o) => `/dashboard/webhooks/${o.endpointId}/test`, form: { event: 'status.updated' } },
  { method: 'GET', path: (o) => `/dashboard/webhooks/${o.endpointId}/remove` },
  { method: 'POST', path: (o) => `/dashboard/webhooks/${o.endpointId}/remove` },
  { method: 'GET', path: (o) => `/dashboard/webhooks/${o.endpointId}/deliveries` },
  { method: 'GET', path: (o) => `/dashboard/webhooks/${o.endpointId}/deliveries/${o.eventId}` },
  { method: 'POST', path: (o) => `/dashboard/webhooks/${o.endpointId}/deliveries/${o.eventId}/replay` },
  { method: 'POST', path: (o) => `/dashboard/webhooks/${o.endpointId}/replay`, form: { since: '2020-01-01T00:00', until: '2100-01-01T00:00' } }, // prettier-ignore
  { method: 'GET', path: (o) => `/dashboard/settings/tracking-feeds/${o.feedId}` },
  { method: 'POST', path: (o) => `/dashboard/settings/tracking-feeds/${o.feedId}/secret`, form: { secret: 'a new secret of mine' } },
  { method: 'GET', path: (o) => `/dashboard/settings/tracking-feeds/${o.feedId}/revoke` },
  { method: 'POST', path: (o) => `/dashboard/settings/tracking-feeds/${o.feedId}/revoke` },
  { method: 'GET', path: (o) => `/dashboard/dispatches/${o.dispatchId}/tracking-links` },
  { method: 'POST', path: (o) => `/dashboard/dispatches/${o.dispatchId}/tracking-links`, form: { expires_in_days: '30', locale: '' } },
  { method: 'POST', path: (o) => `/dashboard/dispatches/${o.dispatchId}/tracking-links/${o.linkId}/revoke` },
  // Their link id under this issuer's own dispatch.
  { method: 'POST', path: (o) => `/dashboard/dispatches/${o.myDispatchId}/tracking-links/${o.linkId}/revoke` },
];

let h: BrowserHarness;
let page: Page;
let other: OtherIssuer;

beforeAll(async () => {
  // With a worker: a dispatch is registered through its workflow.
  h = await startBrowserHarness({ worker: true });
  const me = await h.createUser({ issuerName: 'My Bank' });
  const otherIssuerId = await h.createIssuer('Their Bank');
  const otherKey = await h.createKey(otherIssuerId);
  const dispatchId = randomUUID();
  const registered = await request(h.baseUrl, '/v1/dispatches', { headers: bearer(otherKey.key), body: registrationFor(dispatchId) });
  if (registered.status !== 201) throw new Error(`registration failed: ${registered.text}`);
  const endpoint = await createWebhookEndpoint(h.pool, { issuerId: otherIssuerId, url: 'https://their-bank.example/hooks', events: ['status.updated'] }); // prettier-ignore
  if (!endpoint.ok) throw new Error(endpoint.reason);
  const event = await createTestEvent(h.pool, otherIssuerId, endpoint.endpoint.id, 'status.updated');
  const feed = await createFeed(h.pool, { issuerId: otherIssuerId, mode: 'live', provider: 'easypost', secret: 'their easypost secret', description: null }); // prettier-ignore
  const link = await createTrackingLink(h.pool, {
    dispatchId,
    issuerId: otherIssuerId,
    mode: 'live',
    tokenHash: newTrackingToken().hash,
    locale: null,
    requirePostalCode: false,
    expiresAt: new Date(Date.now() + 86_400_000),
  });
  const myDispatchId = randomUUID();
  const mine = await request(h.baseUrl, '/v1/dispatches', { headers: bearer((await h.createKey(me.issuerId)).key), body: registrationFor(myDispatchId) }); // prettier-ignore
  if (mine.status !== 201) throw new Error(`registration failed: ${mine.text}`);
  other = {
    issuerId: otherIssuerId,
    apiKeyId: otherKey.id,
    dispatchId,
    endpointId: endpoint.endpoint.id,
    eventId: event!.eventId,
    feedId: feed.id,
    linkId: link.id,
    myDispatchId,
  };
  page = await h.newPage();
  await signIn(page, me);
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

describe("another issuer's ids", () => {
  it.each(ROUTES.map((route) => [`${route.method} ${route.path(PLACEHOLDERS)}`, route] as const))('%s → 404', async (_name, route) => {
    const path = route.path(other);
    if (route.method === 'GET') {
      const response = await page.goto(path);
      expect(response?.status()).toBe(404);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Not found');
    } else {
      await page.goto('/dashboard/api-keys');
      const response = await postForm(page, path, { _csrf: await csrfTokenOf(page), ...route.form });
      expect(response.status).toBe(404);
    }
  });

  it("leaves the other issuer's key unrevoked and out of this issuer's list", async () => {
    const theirs = await listApiKeys(h.pool, other.issuerId);
    expect(theirs?.find((key) => key.id === other.apiKeyId)?.revokedAt).toBeNull();
    await page.goto('/dashboard/api-keys');
    expect(await page.content()).not.toContain(theirs![0].prefix);
  });

  it("leaves the other issuer's webhook endpoint unchanged (events, state, secret) and out of this issuer's pages", async () => {
    const theirs = await findEndpoint(h.pool, other.issuerId, other.endpointId);
    expect(theirs).toMatchObject({ events: ['status.updated'], pausedAt: null, previousSecretExpiresAt: null });
    const { rows } = await h.pool.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1', [other.endpointId]);
    expect(rows[0].n).toBe(1);
    for (const path of ['/dashboard/webhooks', '/dashboard/deliveries']) {
      await page.goto(path);
      expect(await page.content()).not.toContain(other.endpointId);
    }
  });

  it("leaves the other issuer's tracking feed and tracking link unrevoked, with no new link, and the feed out of this issuer's list", async () => {
    expect(await findIssuerFeed(h.pool, other.issuerId, other.feedId)).toBeDefined();
    const { items } = await pageTrackingLinks(h.pool, other.dispatchId, { limit: 10 });
    expect(items.map((link) => [link.id, link.revokedAt])).toEqual([[other.linkId, null]]);
    await page.goto('/dashboard/settings/tracking-feeds');
    expect(await page.content()).not.toContain(other.feedId);
  });
});
