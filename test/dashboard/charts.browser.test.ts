// The delivery charts on the dashboard's home (Settings → Webhooks) and on an endpoint's page: real
// test events, delivered by the worker to a local receiver, counted in the chart's accessible text
// for the signed-in issuer only (another issuer's deliveries are not); axe passes; every request
// the page makes stays on 127.0.0.1.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { waitForAttempts } from '../../db/delivery-log.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { addEndpoint, sendTestEvent } from './webhook-helpers.js';
import { expectAccessible, saveScreenshot, signIn, startBrowserHarness, type BrowserHarness } from './support.js';

let h: BrowserHarness;
let receiver: Receiver;
let page: Page;
let other: Page;
const requested: string[] = [];

beforeAll(async () => {
  h = await startBrowserHarness({ worker: true, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  receiver = await startReceiver();
  page = await h.newPage();
  other = await h.newPage();
  for (const p of [page, other]) p.on('request', (request) => requested.push(request.url()));
  await signIn(page, await h.createUser({ issuerName: 'Charted Card Co' }));
  await signIn(other, await h.createUser({ issuerName: 'Other Card Co' }));
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await h?.stop();
});

async function deliver(p: Page, endpointId: string): Promise<void> {
  const eventId = await sendTestEvent(p, endpointId);
  expect(await waitForAttempts(h.pool, endpointId, eventId, 1, 15_000)).toBe(true);
}

describe('delivery charts', () => {
  it("show the signed-in issuer's attempts of the last 7 days on home and on the endpoint page", async () => {
    const mine = await addEndpoint(page, { url: receiver.url, events: ['status.updated'] });
    const theirs = await addEndpoint(other, { url: receiver.url, events: ['status.updated'] });
    await page.goto('/dashboard/webhooks');
    expect(await page.locator('#deliveries-chart').textContent()).toBe('No deliveries in the last 7 days.');

    await deliver(page, mine.id);
    await deliver(page, mine.id);
    await deliver(other, theirs.id);

    const expected = 'In the last 7 days: 2 successful, 0 failed, 0 undeliverable attempts.';
    for (const path of ['/dashboard/webhooks', `/dashboard/webhooks/${mine.id}`]) {
      await page.goto(path);
      const chart = page.getByRole('img', { name: 'Delivery attempts per hour by outcome, last 7 days' });
      await expect(chart.count()).resolves.toBe(1);
      expect(await chart.locator('desc').textContent()).toBe(expected);
      expect(await chart.locator('rect[data-outcome="delivered"]').evaluateAll((rects) => rects.map((r) => Number(r.getAttribute('data-value'))).reduce((a, b) => a + b, 0))).toBe(2); // prettier-ignore
      await expect(page.getByRole('img', { name: /^Attempt duration percentiles per day/ }).count()).resolves.toBe(1);
      await expectAccessible(page);
    }
    await page.goto('/dashboard/webhooks');
    await saveScreenshot(page, 'delivery-charts');

    await other.goto(`/dashboard/webhooks/${theirs.id}`);
    expect(await other.locator('#deliveries-chart desc').textContent()).toBe(
      'In the last 7 days: 1 successful, 0 failed, 0 undeliverable attempts.',
    );

    expect(requested.length).toBeGreaterThan(0);
    expect(requested.filter((url) => new URL(url).hostname !== '127.0.0.1')).toEqual([]);
  }, 90_000);
});
