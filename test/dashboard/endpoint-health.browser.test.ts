// Auto-disable in the dashboard (docs/webhooks.md "Auto-disable"): an endpoint disabled because every
// attempt failed says so, and since when, on the Webhooks page and its own page; enabling it offers
// "Replay missed deliveries", which replays its events of the missed range through the existing
// replay machinery to a real receiver. The endpoint is disabled by the worker's own health rule
// (db/endpoint-health.ts recordEndpointFailure, then pauseFailingEndpoint as the delivery activity judges a
// streak past its threshold), so the page shows the real state.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { createTestEvent, createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { pauseFailingEndpoint, recordEndpointFailure } from '../../db/endpoint-health.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { requestsFor, until } from './webhook-helpers.js';
import { expectAccessible, saveScreenshot, signIn, startBrowserHarness, type BrowserHarness, type DashboardUser } from './support.js';

let h: BrowserHarness;
let receiver: Receiver;
let user: DashboardUser;
let page: Page;

beforeAll(async () => {
  h = await startBrowserHarness({ worker: true, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  receiver = await startReceiver();
  user = await h.createUser({ issuerName: 'Failing Endpoint Services' });
  page = await h.newPage();
  await signIn(page, user);
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await h?.stop();
});

describe('an auto-disabled endpoint', () => {
  it('shows why and since when, and after Enable replays what it missed', async () => {
    const created = await createWebhookEndpoint(h.pool, { issuerId: user.issuerId, url: receiver.url, events: ['status.updated'] });
    if (!created.ok) throw new Error(created.reason);
    const id = created.endpoint.id;
    // An event it never got (pending, no driver yet), then a failed attempt judged past the threshold.
    const missed = (await createTestEvent(h.pool, user.issuerId, id, 'status.updated'))!;
    const at = new Date();
    const streak = (await recordEndpointFailure(h.pool, { endpointId: id, at, clock: at }))!;
    const disabled = await pauseFailingEndpoint(h.pool, { endpointId: id, streak, disabledAt: at });
    expect(disabled?.endpointId).toBe(id);

    await page.goto('/dashboard/webhooks');
    const cells = await page.getByRole('row').filter({ hasText: receiver.url }).getByRole('cell').allTextContents();
    expect(cells[3]).toMatch(/^disabled \(failing\) since /);

    await page.goto(`/dashboard/webhooks/${id}`);
    expect(await page.locator('dl').textContent()).toMatch(/Disabled since .+, automatically: every attempt failed since /);
    await expectAccessible(page);
    await saveScreenshot(page, 'webhook-auto-disabled');

    await page.getByRole('button', { name: 'Enable endpoint' }).click();
    await page.waitForURL(/done=enabled/);
    const replay = page.getByRole('button', { name: /^Replay missed deliveries/ });
    await expectAccessible(page);
    await replay.click();
    await page.waitForURL(/replayed=1/);
    const [received] = await until(() => (requestsFor(receiver, missed.eventId).length ? requestsFor(receiver, missed.eventId) : undefined), 'the missed event'); // prettier-ignore
    expect(received.headers['x-service-delivery-attempt']).toBe('1');
  }, 60_000);
});
