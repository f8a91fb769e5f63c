// Dashboard → Dispatches, in a real browser against the real service with its worker: dispatches
// registered and moved through the API (a carrier event, a test helper), then found by id, status,
// destination country and registration date, one mode at a time, a page at a time; the dispatch page
// shows the status record exactly as GET /v1/status/{id} sends it, its carrier events, predictions,
// webhook events and its workflow; keyboard alone gets from the search to a page; axe passes.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { listPredictions } from '../../db/predictions.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { bearer, registrationFor, request } from '../api/http.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { expectAccessible, saveScreenshot, signIn, startBrowserHarness, type BrowserHarness, type DashboardUser } from './support.js';

let h: BrowserHarness;
let user: DashboardUser;
let page: Page;
let receiver: Receiver;
let endpointId: string;
let liveKey: string;
let testKey: string;
/** Live dispatches in registration order: FR, DE (moved to in_transit by a carrier event), FR, IT. */
const live = { fr1: randomUUID(), de: randomUUID(), fr2: randomUUID(), it: randomUUID() };
const testModeId = randomUUID();
const otherIssuersId = randomUUID();

const utcToday = () => new Date().toISOString().slice(0, 10);
const plusDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
/** The UTC days the live dispatches were registered on: one, or two when the registrations cross midnight. */
const registeredOn = { first: '', last: '' };

async function register(key: string, id: string, country: string): Promise<void> {
  const body = registrationFor(id, { destination: { postal_code: '10115', country_code: country }, reference: `ref-${id.slice(0, 8)}` });
  const res = await request(h.baseUrl, '/v1/dispatches', { headers: bearer(key), body });
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${res.text}`);
}

async function until(what: string, condition: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const statusOf = async (id: string, key = liveKey) => (await request(h.baseUrl, `/v1/status/${id}`, { headers: bearer(key) })).body?.status;

/** The dispatch ids listed in the search results, top to bottom. */
const listedIds = () => page.locator('section[aria-labelledby="results-heading"] tbody tr td:first-child').allTextContents();

async function search(filters: { status?: string; country?: string; from?: string; to?: string; mode?: 'Live' | 'Test' }): Promise<void> {
  await page.goto('/dashboard/dispatches');
  if (filters.mode) await page.getByLabel(filters.mode, { exact: true }).check();
  if (filters.status) await page.getByLabel('Status', { exact: true }).selectOption(filters.status);
  if (filters.country) await page.getByLabel('Destination country').fill(filters.country);
  if (filters.from) await page.getByLabel('From', { exact: true }).fill(filters.from);
  if (filters.to) await page.getByLabel('To', { exact: true }).fill(filters.to);
  await page.getByRole('button', { name: 'Search' }).click();
}

/** Presses Tab until the focused element matches, as a keyboard user would (at most 40 presses). */
async function tabTo(selector: string): Promise<void> {
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press('Tab');
    if ((await page.locator(`${selector}:focus`).count()) === 1) return;
  }
  throw new Error(`Tab never reached ${selector}`);
}

beforeAll(async () => {
  h = await startBrowserHarness({ worker: true, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  user = await h.createUser({ issuerName: 'Fjord Card Bank' });
  liveKey = (await h.createKey(user.issuerId)).key;
  testKey = (await h.createKey(user.issuerId, { mode: 'test' })).key;
  receiver = await startReceiver();
  const endpoint = await createWebhookEndpoint(h.pool, { issuerId: user.issuerId, url: receiver.url, events: ['status.updated'] });
  if (!endpoint.ok) throw new Error(endpoint.reason);
  endpointId = endpoint.endpoint.id;

  registeredOn.first = utcToday();
  await register(liveKey, live.fr1, 'FR');
  await register(liveKey, live.de, 'DE');
  await register(liveKey, live.fr2, 'FR');
  await register(liveKey, live.it, 'IT');
  registeredOn.last = utcToday();
  await register(testKey, testModeId, 'FR');
  await register((await h.createKey(await h.createIssuer('Other Bank'))).key, otherIssuersId, 'DE');

  const event = { status: 'in_transit', occurred_at: new Date().toISOString(), location: 'Hamburg hub' };
  expect((await request(h.baseUrl, `/v1/dispatches/${live.de}/events`, { headers: bearer(liveKey), body: event })).status).toBe(202);
  const shipped = await request(h.baseUrl, `/v1/test_helpers/dispatches/${testModeId}/ship`, { method: 'POST', headers: bearer(testKey) });
  expect(shipped.status).toBe(200);
  await until('the carrier event to be folded', async () => (await statusOf(live.de)) === 'in_transit');
  await until('the webhook to be delivered', async () => {
    const { rows } = await h.pool.query(
      `SELECT 1 FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE e.dispatch_id = $1 AND d.state = 'delivered'`,
      [live.de],
    );
    return rows.length > 0;
  });

  page = await h.newPage();
  await signIn(page, user);
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await h?.stop();
});

describe('dispatch search', () => {
  it('opens the page of the dispatch whose whole id is searched for', async () => {
    await page.goto('/dashboard/dispatches');
    await page.getByLabel('Dispatch id').fill(live.de.toUpperCase());
    await page.getByRole('button', { name: 'Open' }).click();
    expect(new URL(page.url()).pathname).toBe(`/dashboard/dispatches/${live.de}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain(live.de);
  });

  it('answers an id that is not a whole UUID with a form error (400), not a 500', async () => {
    const response = await page.goto(`/dashboard/dispatches?id=${live.de.slice(0, 8)}`);
    expect(response?.status()).toBe(400);
    expect(await page.getByRole('alert').textContent()).toContain('Enter a whole dispatch id');
    expect(await page.getByLabel('Dispatch id').getAttribute('aria-invalid')).toBe('true');
    await expectAccessible(page);
    await saveScreenshot(page, 'dispatches-error');
  });

  it('filters by status', async () => {
    await search({ status: 'in_transit' });
    expect(await listedIds()).toEqual([live.de]);
  });

  it('filters by destination country, in either letter case', async () => {
    await search({ country: 'fr' });
    expect(await listedIds()).toEqual([live.fr2, live.fr1]);
    await search({ country: 'DE' });
    expect(await listedIds()).toEqual([live.de]);
  });

  it('answers a country code that is not assigned with a form error (400)', async () => {
    const response = await page.goto('/dashboard/dispatches?country=XX');
    expect(response?.status()).toBe(400);
    expect(await page.getByRole('alert').textContent()).toContain('two-letter ISO 3166-1 country code');
  });

  // The days they were registered on, not today: the test may run after midnight UTC.
  it('filters by registration date, both days included', async () => {
    await search({ from: registeredOn.first, to: registeredOn.last });
    expect(await listedIds()).toEqual([live.it, live.fr2, live.de, live.fr1]);
    await search({ from: plusDays(registeredOn.last, 1) });
    expect(await listedIds()).toEqual([]);
    await search({ to: plusDays(registeredOn.first, -1) });
    expect(await listedIds()).toEqual([]);
  });

  it('answers a date range that ends before it starts with a form error (400)', async () => {
    const today = utcToday();
    const response = await page.goto(`/dashboard/dispatches?from=${today}&to=${plusDays(today, -1)}`);
    expect(response?.status()).toBe(400);
    expect(await page.getByRole('alert').textContent()).toContain('on or after the first date');
  });

  it('lists newest first, a page at a time, and the next page continues where the first ended', async () => {
    await page.goto('/dashboard/dispatches?limit=3');
    expect(await listedIds()).toEqual([live.it, live.fr2, live.de]);
    await page.getByRole('link', { name: 'Next page' }).click();
    expect(await listedIds()).toEqual([live.fr1]);
    expect(await page.getByRole('link', { name: 'Next page' }).count()).toBe(0);
    await page.getByRole('link', { name: 'First page' }).click();
    expect(await listedIds()).toEqual([live.it, live.fr2, live.de]);
  });

  it('answers a cursor it did not make with a form error (400)', async () => {
    const response = await page.goto('/dashboard/dispatches?cursor=bm90LWEtY3Vyc29y');
    expect(response?.status()).toBe(400);
    expect(await page.getByRole('alert').textContent()).toContain('Start again from the first page');
  });

  it('lists test-mode dispatches only in test mode, under a test mode badge', async () => {
    await search({ mode: 'Test' });
    expect(await listedIds()).toEqual([testModeId]);
    expect(await page.locator('#results-heading .badge').textContent()).toBe('Test mode');
    await search({ mode: 'Live' });
    expect(await listedIds()).not.toContain(testModeId);
  });

  it("never lists another issuer's dispatch, and its id opens the not-found page", async () => {
    await search({ country: 'DE' });
    expect(await listedIds()).not.toContain(otherIssuersId);
    const response = await page.goto(`/dashboard/dispatches?id=${otherIssuersId}`);
    expect(response?.status()).toBe(404);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Not found');
  });

  it('passes axe with results listed', async () => {
    await page.goto('/dashboard/dispatches');
    await expectAccessible(page);
    await saveScreenshot(page, 'dispatches');
  });
});

describe('dispatch page', () => {
  it('shows the status record exactly as GET /v1/status/{id} returns it', async () => {
    const api = await request(h.baseUrl, `/v1/status/${live.de}`, { headers: bearer(liveKey) });
    await page.goto(`/dashboard/dispatches/${live.de}`);
    const shown = await page.locator('#status-record').textContent();
    expect(shown).toBe(JSON.stringify(JSON.parse(api.text), null, 2));
    expect(JSON.parse(shown!)).toEqual(api.body);
  });

  it('lists its carrier events with status, location and what the workflow did with each', async () => {
    await page.goto(`/dashboard/dispatches/${live.de}`);
    const row = page.locator('#carrier-events tbody tr');
    expect(await row.count()).toBe(1);
    const cells = await row.locator('td').allTextContents();
    expect(cells.slice(2)).toEqual(['in_transit', '—', 'Hamburg hub', 'Applied: changed the status']);
    expect(cells[1]).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/);
  });

  it('lists its predictions over time, one row per logged version', async () => {
    const logged = await listPredictions(h.pool, live.de);
    expect(logged.map((p) => p.status)).toEqual(['dispatched', 'in_transit']);
    await page.goto(`/dashboard/dispatches/${live.de}`);
    const rows = await page.locator('#predictions tbody tr').allTextContents();
    expect(rows).toHaveLength(logged.length);
    logged.forEach((p, i) => {
      expect(rows[i]).toContain(p.status);
      expect(rows[i]).toContain(`${p.window.min} – ${p.window.max}`);
      expect(rows[i]).toContain(p.confidence);
    });
  });

  it("lists the webhook events it caused with each endpoint's delivery state and attempts, linked to that endpoint's delivery log", async () => {
    await page.goto(`/dashboard/dispatches/${live.de}`);
    const row = page.locator('#webhook-events tbody tr', { hasText: 'status.updated' });
    expect(await row.count()).toBe(1);
    expect(await row.locator('li').textContent()).toContain('delivered, 1 attempt');
    expect(await row.getByRole('link', { name: receiver.url }).getAttribute('href')).toBe(`/dashboard/webhooks/${endpointId}/deliveries`);
  });

  it('names the workflow id and says there is no Temporal UI link when no UI URL is known', async () => {
    await page.goto(`/dashboard/dispatches/${live.de}`);
    expect(await page.locator('#workflow-id').textContent()).toContain(live.de);
    expect(await page.locator('#workflow-id').textContent()).toContain('No Temporal UI address is configured');
  });

  it('links the workflow in the Temporal UI when TEMPORAL_UI_URL is set', async () => {
    const api = await h.startExtraApi({ TEMPORAL_UI_URL: 'http://temporal-ui.test:8233/' });
    await page.goto(new URL(`/dashboard/dispatches/${live.de}`, api.baseUrl).toString());
    expect(await page.locator('#workflow-link').getAttribute('href')).toBe(
      `http://temporal-ui.test:8233/namespaces/default/workflows/${live.de}`,
    );
  });

  it('marks a test-mode dispatch with a test mode badge', async () => {
    await page.goto(`/dashboard/dispatches/${testModeId}`);
    expect(await page.locator('h1 .badge').textContent()).toBe('Test mode');
    await expectAccessible(page);
    await saveScreenshot(page, 'dispatch-test');
  });

  it("answers another issuer's dispatch id with the not-found page", async () => {
    const response = await page.goto(`/dashboard/dispatches/${otherIssuersId}`);
    expect(response?.status()).toBe(404);
  });

  it('passes axe', async () => {
    await page.goto(`/dashboard/dispatches/${live.de}`);
    await expectAccessible(page);
    await saveScreenshot(page, 'dispatch');
  });
});

describe('keyboard only', () => {
  it('reaches a dispatch page from the search by its id', async () => {
    await page.goto('/dashboard/dispatches');
    await tabTo('#search-id');
    await page.keyboard.type(live.fr1);
    await page.keyboard.press('Enter');
    await page.waitForURL(`**/dashboard/dispatches/${live.fr1}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain(live.fr1);
  });

  it('reaches a dispatch page from the search results', async () => {
    await page.goto('/dashboard/dispatches?country=IT');
    await tabTo(`a[href="/dashboard/dispatches/${live.it}"]`);
    await page.keyboard.press('Enter');
    await page.waitForURL(`**/dashboard/dispatches/${live.it}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain(live.it);
  });
});
