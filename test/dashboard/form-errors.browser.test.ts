// The dashboard's refused forms read as the API's refused bodies do (domain/field-errors.ts):
// `field: problem` ("url: is required", "since: is required"), or the sentence the form words for
// people ("Choose at least one event."), never zod's own wording ("Invalid input: expected string,
// received undefined") nor a page that names no field. Forms are posted as a stale or hand-made
// form would be (a field left out, a field too long), with the page's session and CSRF token.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { csrfTokenOf, postForm, signIn, startBrowserHarness, type BrowserHarness, type DashboardUser } from './support.js';

let h: BrowserHarness;
let user: DashboardUser;
let page: Page;
let endpointId: string;

const ZOD_WORDING = /Invalid input|expected string|received undefined|Too big|Too small|not filled in as expected/;

beforeAll(async () => {
  h = await startBrowserHarness();
  user = await h.createUser({ issuerName: 'Form Errors Issuer' });
  const created = await createWebhookEndpoint(
    h.pool,
    { issuerId: user.issuerId, url: 'https://hooks.example.com/cards', events: ['status.updated'], mode: 'live' },
    20,
  );
  if (!created.ok) throw new Error('no endpoint');
  endpointId = created.endpoint.id;
  page = await h.newPage();
  await signIn(page, user);
}, 180_000);

afterAll(async () => {
  await h?.stop();
});

/** Posts `form` to `path` with the CSRF token of the page at `from`; the answer's status and its visible text. */
async function post(from: string, path: string, form: Record<string, string>): Promise<{ status: number; text: string }> {
  await page.goto(from);
  const response = await postForm(page, path, { _csrf: await csrfTokenOf(page), ...form });
  const text = response.text
    .replace(/<[^>]+>/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/\s+/g, ' ');
  return { status: response.status, text };
}

describe('a refused dashboard form', () => {
  it('Settings → Webhooks without a URL says "url: is required"', async () => {
    const res = await post('/dashboard/webhooks', '/dashboard/webhooks', { events: 'status.updated', mode: 'live' });
    expect(res.status).toBe(400);
    expect(res.text).toContain('url: is required');
    expect(res.text).not.toMatch(ZOD_WORDING);
  });

  it('keeps the sentences a form words for people ("Choose at least one event.")', async () => {
    const res = await post('/dashboard/webhooks', '/dashboard/webhooks', { url: 'https://hooks.example.com/x', mode: 'live' });
    expect(res.status).toBe(400);
    expect(res.text).toContain('Choose at least one event.');
  });

  it('rotating a secret without an overlap says "overlap: is required"', async () => {
    const path = `/dashboard/webhooks/${endpointId}/rotate`;
    const res = await post(path, path, { switch: 'end' });
    expect(res.status).toBe(400);
    expect(res.text).toContain('overlap: is required');
    expect(res.text).not.toMatch(ZOD_WORDING);
  });

  it('a replay range without its start says "since: is required"', async () => {
    const res = await post(`/dashboard/webhooks/${endpointId}/deliveries`, `/dashboard/webhooks/${endpointId}/replay`, {
      until: '2026-12-01T10:00',
    });
    expect(res.status).toBe(400);
    expect(res.text).toContain('since: is required');
    expect(res.text).not.toMatch(ZOD_WORDING);
  });

  it('a branding field over 4000 characters names the field and its limit', async () => {
    const path = '/dashboard/settings/tracking-page';
    const res = await post(path, path, { display_name: 'x'.repeat(4001) });
    expect(res.status).toBe(400);
    expect(res.text).toContain('display_name: must be at most 4000 characters long');
    expect(res.text).not.toMatch(ZOD_WORDING);
  });

  it('a sign-in e-mail over 320 characters names the field and its limit', async () => {
    const fresh = await h.newPage();
    await fresh.goto('/dashboard/sign-in');
    const response = await postForm(fresh, '/dashboard/sign-in', {
      _csrf: await csrfTokenOf(fresh),
      email: `${'a'.repeat(320)}@example.test`,
      password: 'x',
    });
    expect(response.status).toBe(400);
    expect(response.text).toContain('email: must be at most 320 characters long');
    expect(response.text).not.toMatch(ZOD_WORDING);
  });
});
