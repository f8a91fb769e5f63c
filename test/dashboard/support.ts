// Browser tests of the dashboard: the real service (test/support/harness.ts) driven by Debian's
// Chromium through playwright-core, headless. Helpers to make a signed-up dashboard user, sign in,
// post a raw form (for CSRF tests), check a page with axe-core, and save the screenshots of docs/operations.md
// (only with UPDATE_SCREENSHOTS=1, so a test run leaves the work tree clean).
import { expect } from '@jest/globals';
import { AxeBuilder } from '@axe-core/playwright';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { createDashboardUser, setPasswordWithToken } from '../../db/dashboard.js';
import { hashPassword, SET_PASSWORD_LINK_TTL_MS } from '../../dashboard/passwords.js';
import { randomId, startHarness, type Harness } from '../support/harness.js';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENSHOTS_DIR = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));

export interface BrowserHarness extends Harness {
  browser: Browser;
  /** A new, cookie-less browser context (one per test keeps sessions apart). */
  newPage(): Promise<Page>;
  /** An issuer with a dashboard user whose password is set. */
  createUser(options?: { issuerName?: string; password?: string }): Promise<DashboardUser>;
  /** A user whose password is not set yet, with their one-time link. */
  inviteUser(issuerId: string): Promise<{ email: string; setPasswordUrl: string }>;
  url(path: string): string;
}

export interface DashboardUser {
  issuerId: string;
  email: string;
  password: string;
}

export async function startBrowserHarness(options: { worker?: boolean; env?: Record<string, string> } = {}): Promise<BrowserHarness> {
  const harness = await startHarness({ worker: options.worker ?? false, env: options.env });
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox'] });
  const contexts: BrowserContext[] = [];
  const url = (path: string) => new URL(path, harness.baseUrl).toString();

  const invite = async (issuerId: string) => {
    const email = `${randomId('user')}@example.test`;
    const created = await createDashboardUser(harness.pool, { issuerId, email, tokenTtlMs: SET_PASSWORD_LINK_TTL_MS });
    if (!created) throw new Error(`no issuer ${issuerId}`);
    return { email, token: created.token, setPasswordUrl: url(`/dashboard/set-password?token=${encodeURIComponent(created.token)}`) };
  };

  return {
    ...harness,
    browser,
    url,
    async newPage() {
      const context = await browser.newContext({ baseURL: harness.baseUrl });
      contexts.push(context);
      return context.newPage();
    },
    async createUser({ issuerName = 'Acme Card Issuing', password = 'correct horse battery staple' } = {}) {
      const issuerId = await harness.createIssuer(issuerName);
      const { email, token } = await invite(issuerId);
      if (!(await setPasswordWithToken(harness.pool, token, await hashPassword(password)))) throw new Error('could not set the password');
      return { issuerId, email, password };
    },
    async inviteUser(issuerId) {
      const { email, setPasswordUrl } = await invite(issuerId);
      return { email, setPasswordUrl };
    },
    async stop() {
      for (const context of contexts) await context.close().catch(() => {});
      await browser.close();
      await harness.stop();
    },
  };
}

export async function signIn(page: Page, user: { email: string; password: string }): Promise<void> {
  await page.goto('/dashboard/sign-in');
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Posts a form with the page's cookies, as a hostile or stale form would (no browser-side checks). */
export async function postForm(page: Page, path: string, form: Record<string, string>): Promise<{ status: number; text: string }> {
  const response = await page.request.post(path, { form, maxRedirects: 0 });
  return { status: response.status(), text: await response.text() };
}

/** The `_csrf` value of the first form on the page. */
export async function csrfTokenOf(page: Page): Promise<string> {
  return (await page.locator('input[name="_csrf"]').first().inputValue()) ?? '';
}

/** axe-core on the current page: no serious or critical violations (WCAG 2.x A/AA rules). */
export async function expectAccessible(page: Page): Promise<void> {
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze();
  const serious = results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`);
  expect(serious).toEqual([]);
}

/** Saves docs/screenshots/<name>.png when UPDATE_SCREENSHOTS=1. */
export async function saveScreenshot(page: Page, name: string): Promise<void> {
  if (process.env.UPDATE_SCREENSHOTS !== '1') return;
  mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  await page.setViewportSize({ width: 1100, height: 720 });
  await page.screenshot({ path: `${SCREENSHOTS_DIR}${name}.png`, fullPage: true });
}
