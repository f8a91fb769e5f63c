// Every dashboard page passes axe-core with no serious or critical violation, in the state a user
// sees it. With UPDATE_SCREENSHOTS=1 this test also refreshes docs/screenshots/ for docs/operations.md.
import { afterAll, beforeAll, describe, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { expectAccessible, saveScreenshot, signIn, startBrowserHarness, type BrowserHarness, type DashboardUser } from './support.js';

let h: BrowserHarness;
let user: DashboardUser;
let page: Page;

beforeAll(async () => {
  h = await startBrowserHarness();
  user = await h.createUser({ issuerName: 'Northwind Card Services' });
  await h.createKey(user.issuerId, { scopes: ['status:read'], mode: 'test' });
  page = await h.newPage();
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

async function check(name: string): Promise<void> {
  await expectAccessible(page);
  await saveScreenshot(page, name);
}

describe('accessibility of every page', () => {
  it('set-password page', async () => {
    await page.goto((await h.inviteUser(user.issuerId)).setPasswordUrl);
    await check('set-password');
  });

  it('sign-in page, also with its error message', async () => {
    await page.goto('/dashboard/sign-in');
    await check('sign-in');
    await signIn(page, { email: user.email, password: 'wrong password here' });
    await check('sign-in-error');
  });

  it('API keys page', async () => {
    await signIn(page, user);
    await page.goto('/dashboard/api-keys');
    await check('api-keys');
  });

  it('new key page', async () => {
    await page.goto('/dashboard/api-keys');
    await page.getByRole('button', { name: 'Create key' }).click();
    await check('api-key-created');
  });

  it('revoke confirmation page', async () => {
    await page.goto('/dashboard/api-keys');
    await page
      .getByRole('link', { name: /^Revoke key/ })
      .first()
      .click();
    await check('api-key-revoke');
  });

  it('not-found page', async () => {
    await page.goto('/dashboard/no-such-page');
    await check('not-found');
  });
});
