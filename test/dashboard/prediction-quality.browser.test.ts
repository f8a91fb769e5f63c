// Dashboard → Prediction quality in a real browser against the real service with its worker:
// dispatches registered through the API, their deliveries recorded, and the page showing, per
// confidence level, the level's target (High 97 %, Medium 92 %, Low 85 %) beside the measured
// coverage and its 95 % interval, for the signed-in issuer's dispatches only; axe passes.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { bearer, request } from '../api/http.js';
import { expectAccessible, saveScreenshot, signIn, startBrowserHarness, type BrowserHarness, type DashboardUser } from './support.js';

let h: BrowserHarness;
let user: DashboardUser;
let page: Page;

/** Registers a live dispatch to Bratislava (Slovakia: no history, so the default table's Low window). */
async function register(key: string): Promise<{ id: string; window: { min: string; max: string } }> {
  const id = randomUUID();
  const res = await request(h.baseUrl, '/v1/dispatches', { headers: bearer(key), body: { id, destination: { postal_code: '811 01', country_code: 'SK' } } }); // prettier-ignore
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${res.text}`);
  const prediction = res.body.prediction as { delivery_window: { min: string; max: string }; confidence_level: string };
  expect(prediction.confidence_level).toBe('Low');
  return { id, window: prediction.delivery_window };
}

/**
 * The delivery on `date` as the service records its own (source `service`): the windows lie in the
 * future and a carrier event may not be dated ahead of now, so it is written where the report reads
 * it (as test/e2e/predictions-quality.test.ts does).
 */
async function recordDeliveredOn(id: string, date: string): Promise<void> {
  const { rowCount } = await h.pool.query(
    `INSERT INTO transit_history (postal_code, country_code, postal_prefix, dispatch_date, delivered_date, business_days, source, dispatch_id, issuer_id)
     SELECT postal_code, country_code, left(postal_code, 2), dispatch_date::date, $2::date, 2, 'service', id, issuer_id FROM dispatches WHERE id = $1`,
    [id, date],
  );
  expect(rowCount).toBe(1);
}

const dayAfter = (date: string) => new Date(Date.parse(date) + 86_400_000).toISOString().slice(0, 10);

/** The cells of the table row headed by the confidence level. */
async function rowOf(level: string): Promise<Record<string, string>> {
  const headers = await page.locator('thead th').allTextContents();
  const cells = [level, ...(await page.locator('tbody tr', { has: page.getByRole('rowheader', { name: level, exact: true }) }).locator('td').allTextContents())]; // prettier-ignore
  return Object.fromEntries(headers.map((header, i) => [header, cells[i]?.trim()]));
}

beforeAll(async () => {
  h = await startBrowserHarness({ worker: true });
  user = await h.createUser({ issuerName: 'Quality Card Bank' });
  const key = (await h.createKey(user.issuerId)).key;
  // Two inside the window (its first and last day), one a day late: 2 of 3.
  const [first, second, third] = [await register(key), await register(key), await register(key)];
  await recordDeliveredOn(first.id, first.window.min);
  await recordDeliveredOn(second.id, second.window.max);
  await recordDeliveredOn(third.id, dayAfter(third.window.max));
  // Another issuer's delivery, late: never counted on this issuer's page.
  const other = await register((await h.createKey(await h.createIssuer('Other Bank'))).key);
  await recordDeliveredOn(other.id, dayAfter(other.window.max));
  page = await h.newPage();
  await signIn(page, user);
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

describe('prediction quality page', () => {
  it('shows each level’s target beside the share of the issuer’s deliveries inside the window and its 95 % interval', async () => {
    await page.goto('/dashboard/prediction-quality');
    expect(await page.locator('caption').textContent()).toBe('3 delivered dispatches');
    const low = await rowOf('Low');
    expect(low).toMatchObject({
      Dispatches: '3',
      Target: '85.0 %',
      'Inside window': '66.7 %',
      '95 % interval': '20.8 % – 93.9 %',
      Verdict: 'Within noise',
      Early: '0',
      Late: '1',
    });
    expect(low['Median width (business days)']).toMatch(/^\d+$/);
    expect(await rowOf('High')).toMatchObject({
      Dispatches: '0',
      Target: '97.0 %',
      'Inside window': '—',
      '95 % interval': '—',
      Verdict: '—',
    });
    expect(await rowOf('Medium')).toMatchObject({ Dispatches: '0', Target: '92.0 %' });
    await saveScreenshot(page, 'dashboard-prediction-quality');
  });

  it('charts the measured share inside the window against the target, for the levels with dispatches', async () => {
    await page.goto('/dashboard/prediction-quality');
    const chart = page.getByRole('img', { name: /^Measured share inside the window per confidence level/ });
    expect(await chart.locator('desc').textContent()).toBe('Low: 66.7 % inside, target 85 %.');
    expect(await chart.locator('line[data-target="0.85"]').count()).toBe(1);
    await expectAccessible(page);
  });

  it('is reached from the navigation and passes axe', async () => {
    await page.goto('/dashboard/webhooks');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Prediction quality' }).click();
    await page.waitForURL('**/dashboard/prediction-quality');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Prediction quality');
    await expectAccessible(page);
  });

  it('says there is nothing to compare yet for an issuer without delivered dispatches', async () => {
    const newcomer = await h.createUser({ issuerName: 'New Card Bank' });
    const other = await h.newPage();
    await signIn(other, newcomer);
    await other.goto('/dashboard/prediction-quality');
    expect(await other.getByText('No delivered dispatches with a prediction yet').count()).toBe(1);
    expect(await other.locator('table').count()).toBe(0);
  });
});
