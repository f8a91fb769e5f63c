// Dashboard → Settings → Tracking feeds, in a real browser against the real service
// (docs/tracking-feeds.md, docs/dashboard.md): a feed made here shows the URL to paste with the
// provider's own words for where, refuses a missing secret naming the field, takes a signed body at
// that URL (counted on the list), lists a checkpoint no dispatch matched and those it ignored (with
// why, paged apart), and revoking it makes the URL answer 404; axe-core passes on each page.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { FLUSH_MS } from '../../api/feed-counts.js';
import { request } from '../api/http.js';
import { easyPostBody } from '../support/tracking-feeds.js';
import {
  csrfTokenOf,
  expectAccessible,
  postForm,
  saveScreenshot,
  signIn,
  startBrowserHarness,
  type BrowserHarness,
  type DashboardUser,
} from './support.js';

let h: BrowserHarness;
let user: DashboardUser;
let page: Page;
const SECRET = 'whsec-dashboard-feed-0123456789';

beforeAll(async () => {
  h = await startBrowserHarness();
  user = await h.createUser({ issuerName: 'Feeds Card Services' });
  page = await h.newPage();
  await signIn(page, user);
}, 180_000);

afterAll(async () => {
  await h?.stop();
});

describe('Settings → Tracking feeds', () => {
  it('creates a feed, shows its URL with where to paste it, counts a signed body, lists its unmatched checkpoint and revokes it', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Tracking feeds' }).click();
    await page.getByLabel('Provider').selectOption('easypost');
    await page.getByRole('button', { name: 'Create feed' }).click();
    expect(await page.getByLabel('Webhook secret').getAttribute('aria-invalid')).toBe('true');
    await expectAccessible(page);

    await page.getByLabel('Webhook secret').fill(SECRET);
    await page.getByRole('button', { name: 'Create feed' }).click();
    const url = await page.getByLabel('URL to paste').inputValue();
    expect(url).toMatch(/\/v1\/inbound\/fd_[0-9A-Za-z]{16}$/);
    expect(await page.locator('main').textContent()).toContain('EasyPost');
    expect(await page.content()).not.toContain(SECRET);
    await expectAccessible(page);

    const raw = easyPostBody('DASH 1234 5678', [{ status: 'in_transit', datetime: new Date(Date.now() - 3_600_000).toISOString() }]);
    const signature = `hmac-sha256-hex=${createHmac('sha256', SECRET).update(raw).digest('hex')}`;
    const inbound = await request(h.baseUrl, new URL(url).pathname, { headers: { 'content-type': 'application/json', 'x-hmac-signature': signature }, body: raw }); // prettier-ignore
    expect(inbound.body).toMatchObject({ received: 1, unmatched: 1 });

    await new Promise((resolve) => setTimeout(resolve, FLUSH_MS + 500)); // counts are written once a second (api/feed-counts.ts)
    await page.getByRole('link', { name: 'Back to tracking feeds' }).click();
    expect(await page.locator('tbody tr').first().textContent()).toMatch(/easypost\s*live\s*1\s*0\s*0\s*1/);
    await page.locator('tbody tr a').first().click();
    expect(await page.locator('main table').textContent()).toContain('DASH12345678');
    await expectAccessible(page);
    await saveScreenshot(page, 'tracking-feed');

    await page.getByRole('link', { name: 'Revoke this feed' }).click();
    await page.getByRole('button', { name: 'Revoke feed' }).click();
    expect(await page.getByRole('status').textContent()).toContain('revoked');
    await new Promise((resolve) => setTimeout(resolve, h.config.API_KEY_CACHE_TTL_MS + 100)); // the API's feed cache
    expect((await request(h.baseUrl, new URL(url).pathname, { method: 'HEAD' })).status).toBe(404);
  });

  it('takes an EasyPost secret that is not ASCII, as the API does, and checks signatures keyed with its NFKD form', async () => {
    const secret = 'sécret-ﬁ-dashboard-webhook';
    await page.goto(`${h.baseUrl}/dashboard/settings/tracking-feeds`);
    await page.getByLabel('Provider').selectOption('easypost');
    await page.getByLabel('Webhook secret').fill(secret);
    await page.getByRole('button', { name: 'Create feed' }).click();
    const url = await page.getByLabel('URL to paste').inputValue();
    const raw = easyPostBody('DASH 9999', []);
    const signature = `hmac-sha256-hex=${createHmac('sha256', secret.normalize('NFKD')).update(raw).digest('hex')}`;
    const inbound = await request(h.baseUrl, new URL(url).pathname, { headers: { 'content-type': 'application/json', 'x-hmac-signature': signature }, body: raw }); // prettier-ignore
    expect(inbound.status).toBe(200);
  });

  it('pages a feed’s unmatched checkpoints, 100 at a time, newest first, each shown once', async () => {
    await page.goto(`${h.baseUrl}/dashboard/settings/tracking-feeds`);
    await page.getByLabel('Provider').selectOption('easypost');
    await page.getByLabel('Webhook secret').fill(SECRET);
    await page.getByRole('button', { name: 'Create feed' }).click();
    const url = await page.getByLabel('URL to paste').inputValue();
    // 150 trackers of one checkpoint each: 150 unmatched checkpoints, one per tracking number.
    const at = new Date(Date.now() - 3_600_000).toISOString();
    for (let i = 0; i < 150; i += 1) {
      const raw = easyPostBody(`PAGE${String(i).padStart(4, '0')}`, [{ status: 'in_transit', datetime: at }]);
      const signature = `hmac-sha256-hex=${createHmac('sha256', SECRET).update(raw).digest('hex')}`;
      const inbound = await request(h.baseUrl, new URL(url).pathname, { headers: { 'content-type': 'application/json', 'x-hmac-signature': signature }, body: raw }); // prettier-ignore
      expect(inbound.body).toMatchObject({ unmatched: 1 });
    }
    await page.goto(`${h.baseUrl}/dashboard/settings/tracking-feeds/${url.split('/').at(-1)}`);
    const shown = async () => (await page.locator('main table tbody tr td:first-child').allTextContents()).map((t) => t.trim());
    const first = await shown();
    expect(first).toHaveLength(100);
    await page.getByRole('link', { name: 'Older checkpoints' }).click();
    const second = await shown();
    expect(second).toHaveLength(50);
    expect(await page.getByRole('link', { name: 'Older checkpoints' }).count()).toBe(0);
    expect(new Set([...first, ...second]).size).toBe(150);
    await expectAccessible(page);
    await page.getByRole('link', { name: 'Newest checkpoints' }).click();
    expect(await shown()).toEqual(first);
  }, 120_000);

  it('answers a page link whose cursor was edited with 400 saying so, and the newest checkpoints', async () => {
    const feedPath = new URL(page.url()).pathname;
    const response = await page.goto(`${h.baseUrl}${feedPath}?cursor=not-a-cursor`);
    expect(response?.status()).toBe(400);
    expect(await page.getByRole('alert').textContent()).toContain('This page link is not valid any more');
    expect(await page.locator('main table tbody tr').count()).toBe(100);
  });

  it('lists the checkpoints a feed ignored beside the unmatched ones, with why, 100 a page, each shown once', async () => {
    await page.goto(`${h.baseUrl}/dashboard/settings/tracking-feeds`);
    await page.getByLabel('Provider').selectOption('easypost');
    await page.getByLabel('Webhook secret').fill(SECRET);
    await page.getByRole('button', { name: 'Create feed' }).click();
    const url = await page.getByLabel('URL to paste').inputValue();
    // One tracker whose 150 checkpoints all say `unknown` (nothing about where the card is), and one
    // scan no dispatch matches.
    const first = Date.now() - 48 * 3_600_000;
    const unknown = Array.from({ length: 150 }, (_, i) => ({ status: 'unknown', datetime: new Date(first + i * 60_000).toISOString() }));
    const raw = easyPostBody('IGNORED 0001', [
      ...unknown,
      { status: 'in_transit', datetime: new Date(Date.now() - 3_600_000).toISOString() },
    ]);
    const signature = `hmac-sha256-hex=${createHmac('sha256', SECRET).update(raw).digest('hex')}`;
    const inbound = await request(h.baseUrl, new URL(url).pathname, { headers: { 'content-type': 'application/json', 'x-hmac-signature': signature }, body: raw }); // prettier-ignore
    expect(inbound.body).toMatchObject({ received: 151, unmatched: 1, ignored: 150 });

    await page.goto(`${h.baseUrl}/dashboard/settings/tracking-feeds/${url.split('/').at(-1)}`);
    const ignored = page.getByRole('region', { name: 'Ignored checkpoints' });
    const unmatched = page.getByRole('region', { name: 'Unmatched checkpoints' });
    const rows = () => ignored.locator('tbody tr').allTextContents();
    expect(await unmatched.locator('tbody tr').count()).toBe(1);
    const firstPage = await rows();
    expect(firstPage).toHaveLength(100);
    const cells = (await ignored.locator('tbody tr').first().locator('td').allTextContents()).map((text) => text.trim());
    expect(cells).toEqual([
      'IGNORED0001',
      'usps',
      'unknown / unknown',
      expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      "no_status_mapping: the provider's status says nothing about where the card is",
      expect.any(String),
    ]);
    await expectAccessible(page);
    await page.getByRole('link', { name: 'Older ignored checkpoints' }).click();
    const secondPage = await rows();
    expect(secondPage).toHaveLength(50);
    expect(await unmatched.locator('tbody tr').count()).toBe(1);
    expect(new Set([...firstPage, ...secondPage]).size).toBe(150);
    await page.getByRole('link', { name: 'Newest ignored checkpoints' }).click();
    expect(await rows()).toEqual(firstPage);

    const response = await page.goto(`${page.url()}?ignored_cursor=not-a-cursor`);
    expect(response?.status()).toBe(400);
    expect(await ignored.getByRole('alert').textContent()).toContain('This page link is not valid any more');
  }, 120_000);
});

describe('Settings → Tracking feeds, as an issuer uses it', () => {
  it('says what to do next when the issuer has no feed yet', async () => {
    const fresh = await h.newPage();
    await signIn(fresh, await h.createUser({ issuerName: 'No Feeds Yet Bank' }));
    await fresh.goto('/dashboard/settings/tracking-feeds');
    const feeds = fresh.getByRole('region', { name: 'Feeds' });
    expect(await feeds.textContent()).toMatch(/No feeds yet\. Create one below/);
    await expectAccessible(fresh);
  });

  it('asks before revoking a feed: cancelling keeps it, confirming revokes it', async () => {
    await page.goto(`${h.baseUrl}/dashboard/settings/tracking-feeds`);
    await page.getByLabel('Provider').selectOption('ship24');
    await page.getByLabel('Webhook secret').fill(SECRET);
    await page.getByRole('button', { name: 'Create feed' }).click();
    const feedId = new URL(await page.getByLabel('URL to paste').inputValue()).pathname.split('/').at(-1)!;
    await page.goto(`${h.baseUrl}/dashboard/settings/tracking-feeds/${feedId}`);

    await page.getByRole('link', { name: 'Revoke this feed' }).click();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Revoke tracking feed');
    expect(await page.locator('main').textContent()).toContain('cannot be undone');
    await expectAccessible(page);
    await page.getByRole('link', { name: 'Cancel' }).click();
    expect(new URL(page.url()).pathname).toBe(`/dashboard/settings/tracking-feeds/${feedId}`);
    expect((await request(h.baseUrl, `/v1/inbound/${feedId}`, { method: 'HEAD' })).status).toBe(200);

    await page.getByRole('link', { name: 'Revoke this feed' }).click();
    await page.getByRole('button', { name: 'Revoke feed' }).click();
    expect(await page.getByRole('status').textContent()).toContain(`Feed ${feedId} revoked`);
  });

  it('shows a refused description beside its field, named, with the field marked invalid', async () => {
    await page.goto(`${h.baseUrl}/dashboard/settings/tracking-feeds`);
    const response = await postForm(page, '/dashboard/settings/tracking-feeds', {
      _csrf: await csrfTokenOf(page),
      _once: 'a'.repeat(24),
      provider: 'easypost',
      mode: 'live',
      secret: SECRET,
      description: 'd'.repeat(201),
    });
    expect(response.status).toBe(400);
    await page.setContent(response.text);
    expect(await page.locator('#description-error').textContent()).toBe('At most 200 characters.');
    expect(await page.getByLabel('Description').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Description').getAttribute('aria-describedby')).toContain('description-error');
  });

  it('shows a provider’s status text and a long tracking number as text, never as markup', async () => {
    await page.goto(`${h.baseUrl}/dashboard/settings/tracking-feeds`);
    await page.getByLabel('Provider').selectOption('easypost');
    await page.getByLabel('Webhook secret').fill(SECRET);
    await page.getByRole('button', { name: 'Create feed' }).click();
    const url = await page.getByLabel('URL to paste').inputValue();
    const markup = '<img src=x id=injected><b>bold</b>';
    const tracking = `LONG${'9'.repeat(60)}`;
    const raw = easyPostBody(tracking, [{ status: markup, datetime: new Date(Date.now() - 3_600_000).toISOString() }]);
    const signature = `hmac-sha256-hex=${createHmac('sha256', SECRET).update(raw).digest('hex')}`;
    const inbound = await request(h.baseUrl, new URL(url).pathname, { headers: { 'content-type': 'application/json', 'x-hmac-signature': signature }, body: raw }); // prettier-ignore
    expect(inbound.status).toBe(200);
    await page.goto(`${h.baseUrl}/dashboard/settings/tracking-feeds/${url.split('/').at(-1)}`);
    const ignored = page.getByRole('region', { name: 'Ignored checkpoints' });
    expect(await ignored.locator('tbody tr td').nth(2).textContent()).toContain(markup);
    expect(await page.locator('#injected, main b').count()).toBe(0);
    expect(await ignored.locator('tbody tr td').first().textContent()).toBe(tracking);
    await page.setViewportSize({ width: 1024, height: 800 });
    expect(await page.evaluate<boolean>('document.documentElement.scrollWidth <= document.documentElement.clientWidth')).toBe(true);
  });
});
