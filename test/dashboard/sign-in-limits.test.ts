// Dashboard sign-in limits over plain HTTP (docs/dashboard.md "Security model"): the
// per-account limit that no rotation of client addresses escapes, attempts counted before the
// password is verified (so a parallel burst cannot outrun the count), and which address is counted
// with and without TRUST_PROXY. Each test uses its own account and its own client addresses.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createDashboardUser, setPasswordWithToken } from '../../db/dashboard.js';
import { hashPassword, SET_PASSWORD_LINK_TTL_MS } from '../../dashboard/passwords.js';
import {
  ACCOUNT_FAILURES_ALLOWED,
  ACCOUNT_WINDOW_SECONDS,
  ADDRESS_FAILURES_ALLOWED,
  SIGN_IN_FAILURES_ALLOWED,
  SIGN_IN_WINDOW_SECONDS,
  signInLimitKeys,
} from '../../dashboard/sign-in-limiter.js';
import { randomId, startHarness, type Harness } from '../support/harness.js';

const PASSWORD = 'correct horse battery staple';
const WRONG = 'wrong password 123';
const TOO_MANY = /Too many sign-in attempts\. Try again in \d+ minutes?\./;

let h: Harness;
let proxied: { baseUrl: string };

beforeAll(async () => {
  h = await startHarness({ worker: false });
  proxied = await h.startExtraApi({ TRUST_PROXY: 'true' });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

async function createUser(): Promise<string> {
  const issuerId = await h.createIssuer('Sign-in Limits Bank');
  const email = `${randomId('limits')}@example.test`;
  const created = await createDashboardUser(h.pool, { issuerId, email, tokenTtlMs: SET_PASSWORD_LINK_TTL_MS });
  if (!created || !(await setPasswordWithToken(h.pool, created.token, await hashPassword(PASSWORD)))) throw new Error('no user');
  return email;
}

// Client addresses no other test uses (TEST-NET-2, one per call).
let nextAddress = 0;
const newAddress = () => `198.51.100.${++nextAddress}`;

interface SignInForm {
  cookie: string;
  csrf: string;
}

/** The sign-in page's form cookie and CSRF token, as a browser would hold them. */
async function openSignIn(baseUrl: string): Promise<SignInForm> {
  const page = await fetch(`${baseUrl}/dashboard/sign-in`);
  const cookie = page.headers
    .getSetCookie()
    .map((header) => header.split(';')[0])
    .join('; ');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1];
  if (!csrf) throw new Error('no CSRF token on the sign-in page');
  return { cookie, csrf };
}

interface Attempt {
  status: number;
  retryAfter: number | undefined;
  alert: string | undefined;
}

async function postSignIn(
  baseUrl: string,
  form: SignInForm,
  credentials: { email: string; password: string },
  forwardedFor?: string,
): Promise<Attempt> {
  const response = await fetch(`${baseUrl}/dashboard/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      cookie: form.cookie,
      'content-type': 'application/x-www-form-urlencoded',
      ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}),
    },
    body: new URLSearchParams({ _csrf: form.csrf, ...credentials }).toString(),
  });
  const retryAfter = response.headers.get('retry-after');
  const alert = /role="alert"[^>]*>([^<]*)</.exec(await response.text())?.[1];
  return { status: response.status, retryAfter: retryAfter === null ? undefined : Number(retryAfter), alert };
}

async function signIn(baseUrl: string, credentials: { email: string; password: string }, forwardedFor?: string): Promise<Attempt> {
  return postSignIn(baseUrl, await openSignIn(baseUrl), credentials, forwardedFor);
}

describe('per-account limit', () => {
  it(`refuses an account after ${ACCOUNT_FAILURES_ALLOWED} wrong passwords from as many addresses, even with the right password, until its window passes`, async () => {
    const email = await createUser();
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 30; attempt++)
      statuses.push((await signIn(proxied.baseUrl, { email, password: WRONG }, newAddress())).status);
    expect(statuses).toEqual([...Array(ACCOUNT_FAILURES_ALLOWED).fill(401), ...Array(30 - ACCOUNT_FAILURES_ALLOWED).fill(429)]);

    const right = await signIn(proxied.baseUrl, { email, password: PASSWORD }, newAddress());
    expect(right.status).toBe(429);
    expect(right.alert).toMatch(TOO_MANY);
    expect(right.retryAfter).toBeGreaterThan(SIGN_IN_WINDOW_SECONDS);
    expect(right.retryAfter).toBeLessThanOrEqual(ACCOUNT_WINDOW_SECONDS);

    // The window passing, without waiting an hour: the account's counter expires.
    await h.pool.query('UPDATE dashboard_sign_in_limits SET expire = 0 WHERE key = $1', [signInLimitKeys(email, '').account]);
    expect((await signIn(proxied.baseUrl, { email, password: PASSWORD }, newAddress())).status).toBe(303);
  });

  it('answers an unknown e-mail address exactly as a known account once the account limit is reached', async () => {
    const known = await createUser();
    const unknown = `${randomId('nobody')}@example.test`;
    const lastOf = async (email: string) => {
      let last: Attempt | undefined;
      for (let attempt = 0; attempt <= ACCOUNT_FAILURES_ALLOWED; attempt++)
        last = await signIn(proxied.baseUrl, { email, password: WRONG }, newAddress());
      return last!;
    };
    const [forKnown, forUnknown] = [await lastOf(known), await lastOf(unknown)];
    expect(forKnown.status).toBe(429);
    expect(forUnknown.status).toBe(429);
    expect(forUnknown.alert).toBe(forKnown.alert);
    expect(Math.abs(forUnknown.retryAfter! - forKnown.retryAfter!)).toBeLessThanOrEqual(120);
  });
});

describe('per-address limit', () => {
  it(`refuses a client address after ${ADDRESS_FAILURES_ALLOWED} wrong passwords across accounts (password spraying)`, async () => {
    const address = newAddress();
    const statuses: number[] = [];
    for (let attempt = 0; attempt <= ADDRESS_FAILURES_ALLOWED; attempt++)
      statuses.push((await signIn(proxied.baseUrl, { email: `${randomId('sprayed')}@example.test`, password: WRONG }, address)).status);
    expect(statuses).toEqual([...Array(ADDRESS_FAILURES_ALLOWED).fill(401), 429]);
    // Another address is not affected.
    expect((await signIn(proxied.baseUrl, { email: await createUser(), password: PASSWORD }, newAddress())).status).toBe(303);
  });
});

describe('attempts counted before the password is verified', () => {
  it(`verifies only ${SIGN_IN_FAILURES_ALLOWED} of 20 parallel wrong passwords from one address; the others are refused`, async () => {
    const email = await createUser();
    const address = newAddress();
    const forms = await Promise.all(Array.from({ length: 20 }, () => openSignIn(proxied.baseUrl)));
    const attempts = await Promise.all(forms.map((form) => postSignIn(proxied.baseUrl, form, { email, password: WRONG }, address)));
    const statuses = attempts.map((attempt) => attempt.status);
    expect(statuses.filter((status) => status === 401)).toHaveLength(SIGN_IN_FAILURES_ALLOWED);
    expect(statuses.filter((status) => status === 429)).toHaveLength(20 - SIGN_IN_FAILURES_ALLOWED);
  });
});

describe('which client address is counted', () => {
  it('with TRUST_PROXY=false ignores a forged X-Forwarded-For: the attempts count against the socket address', async () => {
    const email = await createUser();
    for (let attempt = 0; attempt < SIGN_IN_FAILURES_ALLOWED; attempt++)
      expect((await signIn(h.baseUrl, { email, password: WRONG }, newAddress())).status).toBe(401);
    const next = await signIn(h.baseUrl, { email, password: PASSWORD }, newAddress());
    expect(next.status).toBe(429);
    expect(next.alert).toMatch(TOO_MANY);
  });

  it('with TRUST_PROXY=true, wrong passwords from one client address do not lock out the account signing in from another', async () => {
    const email = await createUser();
    const attacker = newAddress();
    for (let attempt = 0; attempt < SIGN_IN_FAILURES_ALLOWED; attempt++)
      expect((await signIn(proxied.baseUrl, { email, password: WRONG }, attacker)).status).toBe(401);
    expect((await signIn(proxied.baseUrl, { email, password: PASSWORD }, attacker)).status).toBe(429);
    expect((await signIn(proxied.baseUrl, { email, password: PASSWORD }, newAddress())).status).toBe(303);
  });
});
