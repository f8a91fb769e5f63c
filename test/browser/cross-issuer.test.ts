// Tenancy: every dashboard route, given the ids of another issuer's objects, answers the same 404
// page as for ids that do not exist, and changes nothing. Table-driven: a new page adds its routes
// to ROUTES (and the objects it needs to OtherIssuer).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { listApiKeys } from '../../db/issuers.js';
import { csrfTokenOf, postForm, signIn, startBrowserHarness, type BrowserHarness } from './support.js';

/** Objects that belong to the other issuer. */
interface OtherIssuer {
  issuerId: string;
  apiKeyId: string;
}

const ROUTES: Array<{ method: 'GET' | 'POST'; path: (other: OtherIssuer) => string; form?: Record<string, string> }> = [
  { method: 'GET', path: (o) => `/dashboard/api-keys/${o.apiKeyId}/revoke` },
  { method: 'POST', path: (o) => `/dashboard/api-keys/${o.apiKeyId}/revoke` },
];

let h: BrowserHarness;
let page: Page;
let other: OtherIssuer;

beforeAll(async () => {
  h = await startBrowserHarness();
  const me = await h.createUser({ issuerName: 'My Bank' });
  const otherIssuerId = await h.createIssuer('Their Bank');
  other = { issuerId: otherIssuerId, apiKeyId: (await h.createKey(otherIssuerId)).id };
  page = await h.newPage();
  await signIn(page, me);
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

describe("another issuer's ids", () => {
  it.each(ROUTES.map((route) => [`${route.method} ${route.path({ issuerId: ':issuer', apiKeyId: ':key' })}`, route] as const))(
    '%s → 404',
    async (_name, route) => {
      const path = route.path(other);
      if (route.method === 'GET') {
        const response = await page.goto(path);
        expect(response?.status()).toBe(404);
        expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Not found');
      } else {
        await page.goto('/dashboard/api-keys');
        const response = await postForm(page, path, { _csrf: await csrfTokenOf(page), ...route.form });
        expect(response.status).toBe(404);
      }
    },
  );

  it("leaves the other issuer's key unrevoked and out of this issuer's list", async () => {
    const theirs = await listApiKeys(h.pool, other.issuerId);
    expect(theirs?.find((key) => key.id === other.apiKeyId)?.revokedAt).toBeNull();
    await page.goto('/dashboard/api-keys');
    expect(await page.content()).not.toContain(theirs![0].prefix);
  });
});
