// Signing in to the dashboard in a real browser: the failure message that never tells whether an
// account exists, the one-time set-password link, sign-out, CSRF on every form, the sign-in rate
// limit, and the cookie and security headers that protect a session.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SIGN_IN_FAILURES_ALLOWED } from '../../dashboard/sign-in-limiter.js';
import { csrfTokenOf, postForm, signIn, startBrowserHarness, type BrowserHarness, type DashboardUser } from './support.js';

let h: BrowserHarness;
let user: DashboardUser;

beforeAll(async () => {
  h = await startBrowserHarness();
  user = await h.createUser({ issuerName: 'Sign-in Bank' });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

describe('sign-in', () => {
  it('shows "Incorrect email or password" for a wrong password and stays on the sign-in page', async () => {
    const page = await h.newPage();
    await signIn(page, { email: user.email, password: 'not the password at all' });
    expect(await page.getByRole('alert').textContent()).toBe('Incorrect email or password.');
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
  });

  it('answers an unknown email exactly as a wrong password (no user enumeration)', async () => {
    const page = await h.newPage();
    await signIn(page, { email: 'nobody-here@example.test', password: 'not the password at all' });
    expect(await page.getByRole('alert').textContent()).toBe('Incorrect email or password.');
  });

  it('signs in with the right password and shows the issuer name in the header', async () => {
    const page = await h.newPage();
    await signIn(page, user);
    expect(new URL(page.url()).pathname).toBe('/dashboard/webhooks');
    expect(await page.locator('header .issuer').textContent()).toContain('Sign-in Bank');
  });

  it('sends the session cookie HttpOnly and SameSite=Lax, never readable by page script', async () => {
    const page = await h.newPage();
    await signIn(page, user);
    const cookie = (await page.context().cookies()).find((c) => c.name === 'cds_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
  });

  it('refuses a sixth attempt within 15 minutes for the same email and IP, even with the right password', async () => {
    const target = await h.createUser({ issuerName: 'Rate Limited Bank' });
    const page = await h.newPage();
    for (let attempt = 0; attempt < SIGN_IN_FAILURES_ALLOWED; attempt++)
      await signIn(page, { email: target.email, password: 'wrong password 123' });
    await signIn(page, target);
    expect(await page.getByRole('alert').textContent()).toMatch(/^Too many sign-in attempts\. Try again in 1[45] minutes\.$/);
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
  });
});

describe('set-password link', () => {
  it('sets the password once; the same link then shows "invalid, expired or already used"', async () => {
    const issuerId = await h.createIssuer('Invited Bank');
    const invited = await h.inviteUser(issuerId);
    const page = await h.newPage();
    await page.goto(invited.setPasswordUrl);
    await page.getByLabel('New password').fill('a long enough passphrase');
    await page.getByLabel('Repeat the password').fill('a long enough passphrase');
    await page.getByRole('button', { name: 'Set password' }).click();
    expect(await page.getByRole('status').textContent()).toBe('Your password is set. Sign in with it.');
    await signIn(page, { email: invited.email, password: 'a long enough passphrase' });
    expect(new URL(page.url()).pathname).toBe('/dashboard/webhooks');

    const again = await (await h.newPage()).goto(invited.setPasswordUrl);
    expect(again?.status()).toBe(404);
    expect(await again?.text()).toContain('invalid, expired or already used');
  });

  it(`refuses a password shorter than the minimum length`, async () => {
    const invited = await h.inviteUser(await h.createIssuer('Short Password Bank'));
    const page = await h.newPage();
    await page.goto(invited.setPasswordUrl);
    // The browser's own minlength check is bypassed on purpose: the server must hold the rule.
    await page.locator('form').evaluate((form) => form.setAttribute('novalidate', ''));
    await page.getByLabel('New password').fill('short');
    await page.getByLabel('Repeat the password').fill('short');
    await page.getByRole('button', { name: 'Set password' }).click();
    expect(await page.getByRole('alert').textContent()).toBe('Use at least 12 characters.');
  });
});

describe('sign-out', () => {
  it('ends the session: the old session cookie no longer opens a page', async () => {
    const page = await h.newPage();
    await signIn(page, user);
    const session = (await page.context().cookies()).find((c) => c.name === 'cds_session')!;
    await page.getByRole('button', { name: /Sign out/ }).click();
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');

    // Replaying the old cookie from another browser context (as a thief would) gets the sign-in page.
    const other = await h.newPage();
    await other.context().addCookies([{ ...session }]);
    await other.goto('/dashboard/api-keys');
    expect(new URL(other.url()).pathname).toBe('/dashboard/sign-in');
  });
});

describe('CSRF', () => {
  it('answers 403 to a signed-in POST without a CSRF token', async () => {
    const page = await h.newPage();
    await signIn(page, user);
    const response = await postForm(page, '/dashboard/api-keys', { scopes: 'status:read', mode: 'live' });
    expect(response.status).toBe(403);
    expect(response.text).toContain('Form expired');
  });

  it('answers 403 to a signed-in POST with a wrong CSRF token', async () => {
    const page = await h.newPage();
    await signIn(page, user);
    const response = await postForm(page, '/dashboard/sign-out', { _csrf: 'x'.repeat(43) });
    expect(response.status).toBe(403);
    await page.goto('/dashboard/api-keys');
    expect(new URL(page.url()).pathname).toBe('/dashboard/api-keys');
  });

  it("answers 403 to a POST carrying another session's CSRF token", async () => {
    const mine = await h.newPage();
    await signIn(mine, user);
    const theirs = await h.newPage();
    await signIn(theirs, await h.createUser({ issuerName: 'Other Bank' }));
    const response = await postForm(mine, '/dashboard/api-keys', { _csrf: await csrfTokenOf(theirs), scopes: 'status:read', mode: 'live' });
    expect(response.status).toBe(403);
  });

  it('answers 403 to a sign-in POST without the sign-in form token (login CSRF)', async () => {
    const page = await h.newPage();
    const response = await postForm(page, '/dashboard/sign-in', { email: user.email, password: user.password });
    expect(response.status).toBe(403);
  });
});

describe('security headers', () => {
  it('sends a script-free Content-Security-Policy, no-referrer, nosniff, DENY framing and no-store', async () => {
    const response = await fetch(h.url('/dashboard/sign-in'));
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("form-action 'self'");
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('cache-control')).toBe('no-store');
  });
});
