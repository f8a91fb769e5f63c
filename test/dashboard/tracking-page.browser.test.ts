// Dashboard → Settings → Tracking page and a dispatch's tracking links, in a real browser against the
// real service (docs/tracking-page.md "Branding"): the branding form refuses what PATCH /v1/tracking_page refuses (a
// colour too light for white text) and saves what the API then answers; from a dispatch's page an
// issuer makes a link (shown once), the cardholder's page opens with that branding, and revoking it
// turns the page into the 410; another issuer's dispatch is a 404; axe-core passes on every page.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { bearer, registrationFor, request } from '../api/http.js';
import { until } from '../support/until.js';
import { expectAccessible, saveScreenshot, signIn, startBrowserHarness, type BrowserHarness, type DashboardUser } from './support.js';

let h: BrowserHarness;
let user: DashboardUser;
let page: Page;
let key: string;
let otherKey: string;

async function registered(withKey = key): Promise<string> {
  const id = randomUUID();
  const res = await request(h.baseUrl, '/v1/dispatches', { headers: bearer(withKey), body: registrationFor(id, { locale: 'fr-FR' }) });
  expect(res.status).toBe(201);
  return id;
}

beforeAll(async () => {
  h = await startBrowserHarness({ worker: true });
  user = await h.createUser({ issuerName: 'Northwind Card Services' });
  key = (await h.createKey(user.issuerId)).key;
  otherKey = (await h.createKey(await h.createIssuer('Other Issuer'))).key;
  page = await h.newPage();
  await signIn(page, user);
}, 180_000);

afterAll(async () => {
  await h?.stop();
});

describe('Settings → Tracking page', () => {
  it('refuses an accent colour too light for white text, naming the field, and saves a valid branding the API then answers', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Tracking page' }).click();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Tracking page');
    await page.getByLabel('Display name').fill('Northwind Bank');
    await page.getByLabel('Accent colour').fill('#ffcc00');
    await page.getByRole('button', { name: 'Save' }).click();
    expect(await page.getByLabel('Accent colour').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#accent_color-error').textContent()).toContain('4.5:1');
    await expectAccessible(page);

    await page.getByLabel('Accent colour').fill('#1d4e89');
    await page.getByLabel('Support phone').fill('+4930123456');
    await page.getByRole('button', { name: 'Save' }).click();
    expect(await page.getByRole('status').textContent()).toContain('Saved');
    await expectAccessible(page);
    await saveScreenshot(page, 'tracking-page-settings');
    const api = await request(h.baseUrl, '/v1/tracking_page', { headers: bearer(key) });
    expect(api.body).toEqual({
      display_name: 'Northwind Bank',
      accent_color: '#1d4e89',
      activation_url: null,
      support_url: null,
      support_phone: '+4930123456',
    });
  });
});

describe("a dispatch's tracking links", () => {
  it('makes a link from the dispatch page, shows it once, and the cardholder page opens with the branding', async () => {
    const id = await registered();
    await page.goto(`/dashboard/dispatches/${id}`);
    await page.getByRole('link', { name: 'Tracking links' }).click();
    await expectAccessible(page);
    await page.getByLabel('Ask for the destination postal code').check();
    await page.getByRole('button', { name: 'Create link' }).click();
    const url = await page.getByLabel(/Tracking link for dispatch/).inputValue();
    expect(url).toMatch(/^http:\/\/localhost:\d+\/t\/[A-Za-z0-9_-]{43}$/);
    await expectAccessible(page);

    const cardholder = await h.newPage();
    await cardholder.goto(new URL(url).pathname);
    expect(await cardholder.locator('.issuer').textContent()).toBe('Northwind Bank');
    expect(await cardholder.getByLabel('Code postal').count()).toBe(1);

    await page.getByRole('link', { name: /Back to the dispatch/ }).click();
    expect(await page.locator('#tracking-links tbody tr').count()).toBe(1);
    expect(await page.locator('#tracking-links').textContent()).not.toContain(url.split('/t/')[1]);
    await page.getByRole('button', { name: /^Revoke/ }).click();
    expect(await page.getByRole('status').textContent()).toContain('revoked');
    expect(await page.locator('#tracking-links').textContent()).toContain('Revoked');
    const gone = await cardholder.goto(new URL(url).pathname);
    expect(gone?.status()).toBe(410);
  });

  it('leaves nothing of the form that made a link naming the dispatch once the dispatch is erased', async () => {
    const id = await registered();
    await page.goto(`/dashboard/dispatches/${id}/tracking-links`);
    await page.getByRole('button', { name: 'Create link' }).click();
    await page.getByLabel(/Tracking link for dispatch/).inputValue();
    const naming = async () =>
      Number((await h.pool.query('SELECT count(*) AS n FROM dashboard_form_submissions WHERE strpos(location, $1) > 0', [id])).rows[0].n);
    expect(await naming()).toBe(1); // the page the form led to
    const erasure = await request(h.baseUrl, `/v1/dispatches/${id}`, { method: 'DELETE', headers: bearer(key) });
    expect(erasure.status).toBe(202);
    await until(
      async () => (await request(h.baseUrl, `/v1/erasures/${erasure.body.id}`, { headers: bearer(key) })).body.status === 'completed',
      'the erasure to complete',
    );
    expect(await naming()).toBe(0);
  });

  it('refuses a lifetime over 180 days with the field named', async () => {
    await page.goto(`/dashboard/dispatches/${await registered()}/tracking-links`);
    // The browser's own check (max) would stop the form: the server's is what is tested.
    await page.locator('form.stacked').evaluate((form) => form.setAttribute('novalidate', ''));
    await page.getByLabel('Valid for (days)').fill('400');
    await page.getByRole('button', { name: 'Create link' }).click();
    expect(await page.getByLabel('Valid for (days)').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#tracking-links').count()).toBe(0);
  });

  it("answers another issuer's dispatch with the 404 page", async () => {
    const response = await page.goto(`/dashboard/dispatches/${await registered(otherKey)}/tracking-links`);
    expect(response?.status()).toBe(404);
  });
});
