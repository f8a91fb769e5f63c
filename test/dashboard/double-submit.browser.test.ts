// A creating form sent twice makes one thing: a second click while the first answer is still on its
// way (the database held busy by a lock, as a slow one would be), or a reload of the page that showed
// the result, creates one tracking feed, one API key, one webhook endpoint, one tracking link. What
// the first answer shows once (a Shippo feed's URL with its token, a new API key, a tracking link) is
// on the page the browser ends on, and a reload of that page shows it no more.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { bearer, registrationFor, request } from '../api/http.js';
import { signIn, startBrowserHarness, type BrowserHarness, type DashboardUser } from './support.js';

let h: BrowserHarness;
let user: DashboardUser;
let page: Page;

beforeAll(async () => {
  // With a worker: a dispatch (for its tracking links) is registered through its workflow.
  h = await startBrowserHarness({ worker: true, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  user = await h.createUser({ issuerName: 'Double Click Bank' });
  page = await h.newPage();
  await signIn(page, user);
}, 180_000);

afterAll(async () => {
  await h?.stop();
});

const countOf = async (table: string) =>
  (await h.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE issuer_id = $1`, [user.issuerId])).rows[0].n;

/** Clicks the button twice, 300 ms apart, while `table` is locked (its inserts wait), then lets them through. */
async function clickTwiceWhileSlow(buttonName: string, table: string): Promise<void> {
  const button = page.getByRole('button', { name: buttonName });
  await button.scrollIntoViewIfNeeded();
  const box = (await button.boundingBox())!;
  const client = await h.pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`LOCK TABLE ${table} IN EXCLUSIVE MODE`);
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    await new Promise((resolve) => setTimeout(resolve, 300));
  } finally {
    await client.query('COMMIT');
    client.release();
  }
  await page.waitForLoadState('load');
}

describe('a creating form sent twice', () => {
  it('creates one Shippo feed, whose URL with its token the page shows once', async () => {
    await page.goto('/dashboard/settings/tracking-feeds');
    await page.getByLabel('Provider').selectOption('shippo');
    await clickTwiceWhileSlow('Create feed', 'tracking_feeds');
    await page.getByLabel('URL to paste').waitFor();
    expect(await page.getByLabel('URL to paste').inputValue()).toMatch(/\/v1\/inbound\/fd_[0-9A-Za-z]{16}\?token=[\w-]{32,}$/);
    expect(await countOf('tracking_feeds')).toBe(1);

    await page.reload();
    expect(await page.getByLabel('URL to paste').inputValue()).toMatch(/\/v1\/inbound\/fd_[0-9A-Za-z]{16}$/);
    expect(await countOf('tracking_feeds')).toBe(1);
  });

  it('creates one API key, shown once', async () => {
    await page.goto('/dashboard/api-keys');
    await clickTwiceWhileSlow('Create key', 'api_keys');
    const key = await page.getByLabel(/Your new (live|test) key/).inputValue();
    expect(key).toMatch(/^\w+_/);
    expect(await countOf('api_keys')).toBe(1);

    await page.reload();
    expect(await page.content()).not.toContain(key);
    expect(await countOf('api_keys')).toBe(1);
  });

  it('creates one webhook endpoint, and shows its signing secret', async () => {
    await page.goto('/dashboard/webhooks');
    await page.getByLabel('Endpoint URL').fill('http://127.0.0.1:9/double-click');
    await clickTwiceWhileSlow('Add endpoint', 'webhook_endpoints');
    expect(await page.getByLabel(/Signing secret of/).inputValue()).toMatch(/^whsec_/);
    expect(await countOf('webhook_endpoints')).toBe(1);

    await page.reload();
    expect(await countOf('webhook_endpoints')).toBe(1);
  });

  it('creates one tracking link, whose URL the page shows once', async () => {
    const id = randomUUID();
    const key = (await h.createKey(user.issuerId)).key;
    const res = await request(h.baseUrl, '/v1/dispatches', { headers: bearer(key), body: registrationFor(id) });
    expect(res.status).toBe(201);
    await page.goto(`/dashboard/dispatches/${id}/tracking-links`);
    await clickTwiceWhileSlow('Create link', 'tracking_links');
    const url = await page.getByLabel(/Tracking link for dispatch/).inputValue();
    expect(url).toMatch(/\/t\/[A-Za-z0-9_-]{43}$/);
    expect(await countOf('tracking_links')).toBe(1);

    await page.reload();
    expect(await page.content()).not.toContain(url.split('/t/')[1]);
    expect(await countOf('tracking_links')).toBe(1);
  });
});
