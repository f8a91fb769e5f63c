// Settings → Webhooks in a real browser, with the worker running and a real local receiver: add an
// endpoint (secret shown once), a test event that arrives signed with that secret (checked with the
// consumer kit), reveal the secret on demand, rotate it, edit events, disable (no delivery) and
// enable, remove; a URL the SSRF guard refuses is a clear form error. axe-core on every page.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { parse, verify, verifyRequest } from '../../consumer-kit/src/index.js';
import { TEST_EVENT_DISPATCH_ID } from '../../domain/sample-event.js';
import { bearer, registrationFor, request } from '../api/http.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { addEndpoint, requestsFor, sendTestEvent, until } from './webhook-helpers.js';
import { expectAccessible, saveScreenshot, signIn, startBrowserHarness, type BrowserHarness, type DashboardUser } from './support.js';

let h: BrowserHarness;
let receiver: Receiver;
let user: DashboardUser;
let page: Page;
let endpoint: { id: string; secret: string };

beforeAll(async () => {
  h = await startBrowserHarness({ worker: true, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  receiver = await startReceiver();
  user = await h.createUser({ issuerName: 'Northwind Card Services' });
  page = await h.newPage();
  await signIn(page, user);
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await h?.stop();
});

async function check(name: string): Promise<void> {
  await expectAccessible(page);
  await saveScreenshot(page, name);
}

describe('Settings → Webhooks', () => {
  it('is the dashboard home after sign-in, and passes axe with no endpoint yet', async () => {
    expect(new URL(page.url()).pathname).toBe('/dashboard/webhooks');
    await expectAccessible(page);
  });

  it('adds an endpoint with the chosen events and mode and shows its secret once, on the response page only', async () => {
    endpoint = await addEndpoint(page, { url: receiver.url, events: ['status.updated', 'delivery.completed'] });
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await check('webhook-created');

    await page.goto('/dashboard/webhooks');
    expect(await page.content()).not.toContain(endpoint.secret);
    const cells = await page.getByRole('row').filter({ hasText: receiver.url }).getByRole('cell').allTextContents();
    expect(cells.slice(0, 4)).toEqual([receiver.url, 'live', 'status.updated, delivery.completed', 'enabled']);
  });

  it('sends a test event the receiver gets, signed with the endpoint secret, and shows its attempt', async () => {
    const eventId = await sendTestEvent(page, endpoint.id, 'delivery.completed');
    const [received] = await until(
      () => (requestsFor(receiver, eventId).length ? requestsFor(receiver, eventId) : undefined),
      'the test event',
    );
    expect(verify(received.body, String(received.headers['x-service-signature']), endpoint.secret)).toBe(true);
    expect(verifyRequest(received.body, received.headers as Record<string, string>, endpoint.secret).ok).toBe(true);
    const envelope = parse(received.body);
    expect(envelope).toMatchObject({ event: 'delivery.completed', data: { id: TEST_EVENT_DISPATCH_ID, status: 'delivered' } });
    if (envelope.event === 'webhook_endpoint.disabled') throw new Error('the test event is a card event');
    expect(envelope.data.ui_suggestion.recommended_message).toMatch(/^Test event/);

    expect(await page.getByRole('status').textContent()).toContain('Test event sent');
    expect(await page.getByRole('heading', { level: 3 }).first().textContent()).toMatch(/^Attempt 1 · .* · delivered$/);
    await check('webhook-test-event');
  });

  it('shows the health: last success, failure rate of the last 24 hours, undeliverable count', async () => {
    await page.goto('/dashboard/webhooks');
    const cells = await page.getByRole('row').filter({ hasText: receiver.url }).getByRole('cell').allTextContents();
    expect(cells.slice(4)).toEqual([expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/), '0 % of 1', '0']);
    await check('webhooks');
  });

  it('reveals the signing secret on demand, by a POST, not in the endpoint page', async () => {
    await page.goto(`/dashboard/webhooks/${endpoint.id}`);
    expect(await page.content()).not.toContain(endpoint.secret);
    await check('webhook');
    await page.getByRole('button', { name: 'Reveal secret' }).click();
    expect(await page.getByLabel('Current secret').inputValue()).toBe(endpoint.secret);
    await check('webhook-secret');
  });

  it('rotates the secret: with the switch now, the next delivery verifies with the new secret and carries both in webhook-signature', async () => {
    await page.goto(`/dashboard/webhooks/${endpoint.id}/rotate`);
    await check('webhook-rotate');
    await page.getByLabel('Overlap', { exact: true }).fill('1h');
    await page.getByRole('radio', { name: 'Now' }).check();
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const newSecret = await page.getByLabel(/^New signing secret of/).inputValue();
    expect(newSecret).not.toBe(endpoint.secret);
    await check('webhook-rotated');

    const eventId = await sendTestEvent(page, endpoint.id);
    const [received] = await until(
      () => (requestsFor(receiver, eventId).length ? requestsFor(receiver, eventId) : undefined),
      'a delivery',
    );
    const signature = String(received.headers['x-service-signature']);
    expect(verify(received.body, signature, newSecret)).toBe(true);
    expect(verify(received.body, signature, endpoint.secret)).toBe(false);
    expect(String(received.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifyRequest(received.body, received.headers as Record<string, string>, [newSecret]).ok).toBe(true);
    endpoint = { ...endpoint, secret: newSecret };
  });

  it('edits the subscribed events', async () => {
    await page.goto(`/dashboard/webhooks/${endpoint.id}`);
    await page.getByRole('checkbox', { name: 'delivery.completed' }).uncheck();
    await page.getByRole('checkbox', { name: 'delivery.predicted' }).check();
    await page.getByRole('button', { name: 'Save events' }).click();
    expect(await page.getByRole('status').textContent()).toContain('Events saved');
    await page.goto('/dashboard/webhooks');
    const cells = await page.getByRole('row').filter({ hasText: receiver.url }).getByRole('cell').allTextContents();
    expect(cells[2]).toBe('status.updated, delivery.predicted');
  });

  it('refuses to save no event at all', async () => {
    await page.goto(`/dashboard/webhooks/${endpoint.id}`);
    for (const box of await page.getByRole('group', { name: 'Subscribed events' }).getByRole('checkbox').all()) await box.uncheck();
    await page.getByRole('button', { name: 'Save events' }).click();
    expect(await page.locator('main').textContent()).toContain('Choose at least one event.');
  });

  it('disabled, the endpoint gets no delivery of a new event; enabled again, it gets the next one', async () => {
    const key = (await h.createKey(user.issuerId)).key;
    await page.goto(`/dashboard/webhooks/${endpoint.id}`);
    await page.getByRole('button', { name: 'Disable endpoint' }).click();
    expect(await page.getByRole('status').textContent()).toContain('Endpoint disabled');
    expect(await page.getByRole('button', { name: 'Send test event' }).count()).toBe(0);

    const before = receiver.requests.length;
    const dispatchId = randomUUID();
    expect((await request(h.baseUrl, '/v1/dispatches', { method: 'POST', headers: bearer(key), body: registrationFor(dispatchId) })).status).toBe(201); // prettier-ignore
    const { rows } = await until(async () => {
      const result = await h.pool.query(
        `SELECT d.state, d.skipped_reason FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
          WHERE ev.dispatch_id = $1 AND d.endpoint_id = $2`,
        [dispatchId, endpoint.id],
      );
      return result.rowCount ? result : undefined;
    }, 'the delivery.predicted event');
    expect(rows).toEqual([{ state: 'skipped', skipped_reason: 'endpoint disabled' }]);
    expect(receiver.requests.length).toBe(before);

    await page.getByRole('button', { name: 'Enable endpoint' }).click();
    expect(await page.getByRole('status').textContent()).toContain('Endpoint enabled');
    const eventId = await sendTestEvent(page, endpoint.id);
    await until(() => (requestsFor(receiver, eventId).length ? true : undefined), 'a delivery after enabling');
  });

  it('removes the endpoint after a confirmation; its page is then not found', async () => {
    await page.goto(`/dashboard/webhooks/${endpoint.id}`);
    await page.getByRole('link', { name: 'Remove endpoint' }).click();
    await check('webhook-remove');
    await page.getByRole('button', { name: 'Remove endpoint' }).click();
    expect(await page.getByRole('status').textContent()).toContain('Endpoint removed');
    expect(await page.getByRole('row').filter({ hasText: receiver.url }).count()).toBe(0);
    expect((await page.goto(`/dashboard/webhooks/${endpoint.id}`))?.status()).toBe(404);
  });
});

/** Presses Tab until the focused element matches `selector` (a keyboard user's way to a control). */
async function tabTo(target: Page, selector: string): Promise<void> {
  for (let i = 0; i < 60; i++) {
    await target.keyboard.press('Tab');
    if (await target.locator(`${selector}:focus`).count()) return;
  }
  throw new Error(`Tab never reached ${selector}`);
}

describe('keyboard only', () => {
  it('adds an endpoint with nothing but Tab, typing, Space and Enter: all four events start checked, Space unchecks one', async () => {
    const keyboardUrl = `${receiver.url}?keyboard=1`;
    await page.goto('/dashboard/webhooks');
    await tabTo(page, '#url');
    await page.keyboard.type(keyboardUrl);
    await tabTo(page, '#add-event-delivery-exception');
    await page.keyboard.press('Space');
    await tabTo(page, 'form.stacked button[type=submit]');
    await page.keyboard.press('Enter');
    await page.getByLabel(/^Signing secret of/).waitFor();
    expect(await page.getByLabel(/^Signing secret of/).inputValue()).toMatch(/^whsec_/);
    const { rows } = await h.pool.query('SELECT events, mode FROM webhook_endpoints WHERE url = $1', [keyboardUrl]);
    expect(rows).toEqual([{ events: ['status.updated', 'delivery.predicted', 'delivery.completed'], mode: 'live' }]);
  });
});

describe('SSRF guard (without WEBHOOK_ALLOW_PRIVATE_NETWORKS)', () => {
  let guarded: BrowserHarness;
  let guardedPage: Page;

  beforeAll(async () => {
    guarded = await startBrowserHarness();
    guardedPage = await guarded.newPage();
    await signIn(guardedPage, await guarded.createUser({ issuerName: 'Guarded Bank' }));
  }, 120_000);

  afterAll(async () => {
    await guarded?.stop();
  });

  it.each([
    ['http://127.0.0.1:8080/hooks', '127.0.0.1 is in a loopback range'],
    ['http://169.254.169.254/latest/meta-data', '169.254.169.254 is a cloud metadata address'],
  ])('refuses %s with a clear form error and keeps what was typed', async (url, reason) => {
    await guardedPage.goto('/dashboard/webhooks');
    await guardedPage.getByLabel('Endpoint URL').fill(url);
    await guardedPage.getByRole('button', { name: 'Add endpoint' }).click();
    expect(await guardedPage.getByRole('alert').textContent()).toContain(`This URL cannot receive webhooks: ${reason}`);
    expect(await guardedPage.getByLabel('Endpoint URL').inputValue()).toBe(url);
    expect(await guardedPage.getByRole('row').count()).toBe(0);
    await expectAccessible(guardedPage);
  });
});
