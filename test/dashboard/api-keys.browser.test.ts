// Settings → API keys in a real browser: a key created here is shown once and works against the API;
// revoked here, the API refuses it; the list shows prefixes and last use, never a key; and the whole
// create flow works with the keyboard alone.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { parseKey } from '../../domain/api-keys.js';
import { signIn, startBrowserHarness, type BrowserHarness, type DashboardUser } from './support.js';

let h: BrowserHarness;
let user: DashboardUser;

beforeAll(async () => {
  // No key cache: a revocation is visible to the very next API request.
  h = await startBrowserHarness({ env: { API_KEY_CACHE_TTL_MS: '0' } });
  user = await h.createUser({ issuerName: 'Keys Bank' });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

/** The API's answer to a status read with the key: 404 for an unknown dispatch means the key was accepted. */
async function apiStatusWith(key: string): Promise<number> {
  const response = await fetch(h.url(`/v1/status/${randomUUID()}`), { headers: { Authorization: `Bearer ${key}` } });
  return response.status;
}

/** The text of the element that has keyboard focus. */
async function focused(page: Page): Promise<string | null> {
  return page.locator(':focus').textContent();
}

async function createKey(page: Page, options: { scopes?: string[]; mode: 'Live' | 'Test' }): Promise<string> {
  await page.goto('/dashboard/api-keys');
  if (options.scopes) {
    for (const box of await page.getByRole('group', { name: 'Scopes' }).getByRole('checkbox').all()) await box.uncheck();
    for (const scope of options.scopes) await page.getByRole('checkbox', { name: scope }).check();
  }
  await page.getByRole('radio', { name: new RegExp(`^${options.mode}:`) }).check();
  await page.getByRole('button', { name: 'Create key' }).click();
  return page.getByLabel(/Your new (live|test) key/).inputValue();
}

describe('API keys page', () => {
  it('creates a key with the chosen scopes and mode, shows it once, and the API accepts it', async () => {
    const page = await h.newPage();
    await signIn(page, user);
    const key = await createKey(page, { scopes: ['status:read'], mode: 'Test' });
    expect(parseKey(key)?.mode).toBe('test');
    expect(await apiStatusWith(key)).toBe(404);

    await page.goto('/dashboard/api-keys');
    const html = await page.content();
    expect(html).not.toContain(key);
    const row = page.getByRole('row').filter({ hasText: key.slice(0, 21) });
    expect(await row.getByRole('cell').allTextContents()).toEqual(
      expect.arrayContaining([
        `${key.slice(0, 21)}…`,
        'test',
        'status:read',
        expect.stringMatching(/UTC$/),
        'Revoke key ' + `${key.slice(0, 21)}`,
      ]),
    );
  });

  it('refuses a key creation with no scope chosen', async () => {
    const page = await h.newPage();
    await signIn(page, user);
    await page.goto('/dashboard/api-keys');
    for (const box of await page.getByRole('group', { name: 'Scopes' }).getByRole('checkbox').all()) await box.uncheck();
    await page.getByRole('button', { name: 'Create key' }).click();
    expect(await page.getByRole('alert').textContent()).toBe('Choose at least one scope.');
  });

  it('shows when a key was last used by the API', async () => {
    const page = await h.newPage();
    await signIn(page, user);
    const key = await createKey(page, { mode: 'Live' });
    await apiStatusWith(key);
    const lastUsed = async () => {
      await page.goto('/dashboard/api-keys');
      const cells = await page
        .getByRole('row')
        .filter({ hasText: key.slice(0, 21) })
        .getByRole('cell')
        .allTextContents();
      return cells[4];
    };
    // The API records use without making the request wait, so the row may lag by a moment.
    for (let i = 0; i < 20 && (await lastUsed()) === '—'; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await lastUsed()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
  });

  it('revokes a key after confirmation, and the API then refuses it with 401', async () => {
    const page = await h.newPage();
    await signIn(page, user);
    const key = await createKey(page, { mode: 'Live' });
    await page.goto('/dashboard/api-keys');
    await page.getByRole('link', { name: `Revoke key ${key.slice(0, 21)}` }).click();
    await page.getByRole('button', { name: 'Revoke key' }).click();
    expect(await page.getByRole('status').textContent()).toContain(`${key.slice(0, 21)}… revoked`);
    expect(
      await page
        .getByRole('row')
        .filter({ hasText: key.slice(0, 21) })
        .textContent(),
    ).toContain('Revoked');
    expect(await apiStatusWith(key)).toBe(401);
  });
});

describe('keyboard only', () => {
  it('signs in and creates a key with nothing but Tab, typing and Enter', async () => {
    const page = await h.newPage();
    await page.goto('/dashboard/sign-in');
    // The email field has autofocus (applied once the page has settled: wait for it, a busy machine
    // would otherwise lose the first keystrokes); Tab walks the form in document order.
    await page.locator('#email:focus').waitFor();
    await page.keyboard.type(user.email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(user.password);
    await page.keyboard.press('Enter');
    await page.waitForURL('**/dashboard/webhooks');

    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('Skip to content');
    let onNav = false;
    for (let presses = 0; presses < 10 && !onNav; presses++) {
      await page.keyboard.press('Tab');
      onNav = (await focused(page)) === 'API keys';
    }
    expect(onNav).toBe(true);
    await page.keyboard.press('Enter');
    await page.waitForURL('**/dashboard/api-keys');
    let onCreate = false;
    for (let presses = 0; presses < 60 && !onCreate; presses++) {
      await page.keyboard.press('Tab');
      onCreate = (await focused(page)) === 'Create key';
    }
    expect(onCreate).toBe(true);
    await page.keyboard.press('Enter');
    await page.waitForURL('**/dashboard/api-keys');
    expect(parseKey(await page.getByLabel(/Your new live key/).inputValue())).toBeDefined();
  });
});
