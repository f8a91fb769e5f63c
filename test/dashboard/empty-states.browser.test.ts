// A list page with nothing to list says what to do next, as the tracking feeds page does: the API
// keys page with no key, or with every key revoked (the backend's requests are all refused); the
// webhooks page with no endpoint, or with every endpoint disabled; an endpoint's delivery log with no
// attempt (and with none matching its filters); the dispatch search with no dispatch (and with none
// matching its filters). Each page passes axe in that state.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { revokeApiKey } from '../../db/issuers.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { expectAccessible, signIn, startBrowserHarness, type BrowserHarness, type DashboardUser } from './support.js';

let h: BrowserHarness;
let user: DashboardUser;
let page: Page;

beforeAll(async () => {
  h = await startBrowserHarness();
  user = await h.createUser({ issuerName: 'Empty Lists Bank' });
  page = await h.newPage();
  await signIn(page, user);
}, 180_000);

afterAll(async () => {
  await h?.stop();
});

/** The text of the page's main region, spaces collapsed. */
const mainText = async () => ((await page.locator('main').textContent()) ?? '').replace(/\s+/g, ' ');

describe('API keys', () => {
  it('with no key, says to create one below for the backend', async () => {
    await page.goto('/dashboard/api-keys');
    expect(await mainText()).toContain('No keys yet. Create one below and give it to your backend');
    await expectAccessible(page);
  });

  it('with every key revoked, says the API refuses the backend and to create a new key below', async () => {
    const { id } = await h.createKey(user.issuerId);
    await revokeApiKey(h.pool, id, { issuerId: user.issuerId });
    await page.goto('/dashboard/api-keys');
    expect(await page.locator('main table tbody tr').count()).toBe(1);
    expect(await mainText()).toContain('Every key is revoked: the API refuses your backend’s requests. Create a new key below');
    await expectAccessible(page);
  });
});

describe('webhooks', () => {
  it('with no endpoint, says to add one below and what it then receives', async () => {
    await page.goto('/dashboard/webhooks');
    expect(await mainText()).toContain('No endpoints yet. Add one below: the service then sends it');
    await expectAccessible(page);
  });

  it('with every endpoint disabled, says none gets events and how to enable one', async () => {
    const created = await createWebhookEndpoint(h.pool, { issuerId: user.issuerId, url: 'https://bank.example/hooks', events: ['status.updated'] }); // prettier-ignore
    if (!created.ok) throw new Error(created.reason);
    await page.goto(`/dashboard/webhooks/${created.endpoint.id}`);
    await page.getByRole('button', { name: 'Disable endpoint' }).click();
    await page.goto('/dashboard/webhooks');
    expect(await mainText()).toContain('Every endpoint is disabled: no event is sent. Open one and choose “Enable endpoint” on its page');
    await expectAccessible(page);
  });
});

describe("an endpoint's delivery log", () => {
  it('with no attempt, says when attempts come and how to make one now', async () => {
    const created = await createWebhookEndpoint(h.pool, { issuerId: user.issuerId, url: 'https://bank.example/other', events: ['status.updated'] }); // prettier-ignore
    if (!created.ok) throw new Error(created.reason);
    await page.goto(`/dashboard/webhooks/${created.endpoint.id}/deliveries`);
    expect(await mainText()).toContain(
      'No attempts yet. One is made for each event this endpoint subscribes to; to see one now, send a test event',
    );
    await page.getByRole('link', { name: 'send a test event' }).click();
    expect(page.url()).toMatch(new RegExp(`/dashboard/webhooks/${created.endpoint.id}#test-heading$`));

    await page.goto(`/dashboard/webhooks/${created.endpoint.id}/deliveries?outcome=failed`);
    expect(await mainText()).toContain('No attempts match these filters. Show all attempts');
    await page.getByRole('link', { name: 'Show all attempts' }).click();
    expect(new URL(page.url()).search).toBe('');
    await expectAccessible(page);
  });
});

describe('dispatches', () => {
  it('with no dispatch, says how the backend registers one and where test-mode ones are', async () => {
    await page.goto('/dashboard/dispatches');
    expect(await mainText()).toContain('No live dispatches yet. Your backend registers each card it sends with POST /v1/dispatches');
    await expectAccessible(page);
  });

  it('with none matching the filters, offers the search without them', async () => {
    await page.goto('/dashboard/dispatches?mode=live&country=DE');
    expect(await mainText()).toContain('No live dispatches match these filters. Show all live dispatches');
    await page.getByRole('link', { name: 'Show all live dispatches' }).click();
    expect(await mainText()).toContain('No live dispatches yet.');
  });
});
