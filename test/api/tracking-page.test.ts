// The cardholder's tracking page, GET and POST /t/{token} (docs/tracking-page.md "Tracking
// links and the tracking page"): its answers (200, 304, 404, 410, 429), its headers, what it never shows, its
// language, the page following the card, the postal-code gate's cookie and its limit, the per-IP
// limit (the stylesheet not counted) and cds_tracking_page_views_total.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { acceptLanguageHeaders, expectChoiceFits } from '../support/accept-language.js';
import { startHarness, type Harness } from '../support/harness.js';
import { scrape, valueOf } from '../support/prometheus.js';
import { until } from '../support/until.js';
import { bearer, registrationFor, request } from './http.js';

let h: Harness;
let issuerId: string;
let key: string;
let testKey: string;

const POSTAL_CODE = '75011';

async function registered(withKey = key, overrides: Record<string, unknown> = {}): Promise<string> {
  const id = randomUUID();
  const res = await request(h.baseUrl, '/v1/dispatches', { headers: bearer(withKey), body: registrationFor(id, overrides) });
  expect(res.status).toBe(201);
  return id;
}

/** A link's path, /t/{token}. */
async function linkPath(id: string, body: Record<string, unknown> = {}, withKey = key): Promise<string> {
  const res = await request(h.baseUrl, `/v1/dispatches/${id}/tracking_links`, { headers: bearer(withKey), body });
  expect(res.status).toBe(201);
  return new URL(res.body.url).pathname;
}

const page = (path: string, headers: Record<string, string> = {}) => request(h.baseUrl, path, { headers });
const postCode = (path: string, code: string, headers: Record<string, string> = {}) =>
  request(h.baseUrl, path, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: `postal_code=${encodeURIComponent(code)}`,
  });

/** The label of the step marked current. */
const currentStep = (html: string) =>
  /aria-current="step">\s*<span class="marker"[^>]*><\/span><span class="label">([^<]+)</.exec(html)?.[1];

/** A loopback address of its own, so a test's requests have a per-IP window nobody else uses. */
const ownAddress = () =>
  `127.${1 + Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;

beforeAll(async () => {
  h = await startHarness();
  issuerId = await h.createIssuer('Acme Card Issuing');
  key = (await h.createKey(issuerId)).key;
  testKey = (await h.createKey(issuerId, { mode: 'test' })).key;
  await request(h.baseUrl, '/v1/tracking_page', {
    method: 'PATCH',
    headers: bearer(key),
    body: {
      display_name: 'Acme Bank',
      accent_color: '#0b5cad',
      activation_url: 'https://acme.example/activate',
      support_phone: '+33142685300',
    },
  });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

describe('GET /t/{token}', () => {
  it('answers 200 text/html with the issuer, the steps, the window and the message', async () => {
    const res = await page(await linkPath(await registered(key, { locale: 'en-GB' })));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).toContain('Acme Bank');
    expect(res.text).toContain('aria-current="step"');
    expect(res.text).toMatch(/Your card (has been sent|is on its way)/);
  });

  it('sends the headers of docs/tracking-page.md "The page": Cache-Control, ETag, a CSP with default-src none, noindex, no-referrer, nosniff', async () => {
    const res = await page(await linkPath(await registered()));
    expect(res.headers['cache-control']).toBe('private, max-age=60');
    expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const csp = res.headers['content-security-policy'] as string;
    expect(csp).toMatch(/^default-src 'none';/);
    expect(csp).toMatch(/style-src 'self' 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).toContain("img-src 'self' data:");
    expect(csp).toContain("form-action 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/script-src/);
    expect(res.headers['x-robots-tag']).toBe('noindex, nofollow');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('answers 304 without a body for If-None-Match with its ETag', async () => {
    const path = await linkPath(await registered());
    const first = await page(path);
    const second = await page(path, { 'if-none-match': first.headers.etag as string });
    expect(second.status).toBe(304);
    expect(second.text).toBe('');
  });

  it('never shows the postal code, the country or the dispatch id', async () => {
    const id = await registered(key, { destination: { postal_code: '10115', country_code: 'DE' } });
    const res = await page(await linkPath(id));
    expect(res.status).toBe(200);
    expect(res.text).not.toContain('10115');
    expect(res.text).not.toContain(id);
    expect(res.text).not.toMatch(/\bDE\b|Germany|Deutschland/);
  });

  it('loads nothing from another origin: one stylesheet of its own, no script', async () => {
    const res = await page(await linkPath(await registered()));
    expect(res.text).not.toMatch(/<script/i);
    const sources = [...res.text.matchAll(/(?:src|href)="([^"]*)"/g)].map((m) => m[1]);
    const external = sources.filter((s) => /^(https?:)?\/\//.test(s) && !s.startsWith('https://acme.example/'));
    expect(external).toEqual([]);
    const stylesheet = /<link rel="stylesheet" href="([^"]+)"/.exec(res.text)![1];
    const css = await page(stylesheet);
    expect(css.status).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.text).toContain('prefers-color-scheme: dark');
    expect(css.text).toContain('prefers-reduced-motion: reduce');
  });

  it('is written in ?lang= first, then the link locale, then Accept-Language, then English; html lang and Content-Language agree', async () => {
    const id = await registered();
    const withLocale = await linkPath(id, { locale: 'fr-FR' });
    const without = await linkPath(id);
    const cases: Array<[string, Record<string, string>, string]> = [
      [`${withLocale}?lang=de`, { 'accept-language': 'it' }, 'de'],
      [withLocale, { 'accept-language': 'it' }, 'fr-FR'],
      [without, { 'accept-language': 'xx, nl;q=0.9, en;q=0.8' }, 'nl'],
      // RFC 9110: the q parameter's name is case-insensitive.
      [without, { 'accept-language': 'en-GB;Q=0.1, de-AT;Q=0.9' }, 'de-AT'],
      [without, {}, 'en'],
    ];
    for (const [path, headers, expected] of cases) {
      const res = await page(path, headers);
      expect(res.headers['content-language']).toBe(expected);
      expect(res.text).toContain(`<html lang="${expected}" dir="ltr">`);
    }
  });

  it('reads Accept-Language as RFC 9110 §12.5.4 does: odd weights ignored, q=0 never chosen, `*`, any letter case, fr-CA as fr, 10 KB', async () => {
    const path = await linkPath(await registered());
    const cases: Array<[string, (tag: string) => boolean]> = [
      ['de;q=2, fr;q=0.9', (tag) => tag === 'fr'],
      ['de;q=1.5, fr', (tag) => tag === 'fr'],
      ['de;q=abc, fr;q=0.9', (tag) => tag === 'fr'],
      ['en;q=0', (tag) => !tag.startsWith('en')],
      ['en;q=0, *', (tag) => !tag.startsWith('en')],
      ['de;q=0.1, *;q=0.5', (tag) => tag === 'en'],
      ['FR-ca', (tag) => tag === 'fr-CA'],
      ['ja, fr-CA;q=0.8', (tag) => tag === 'fr-CA'],
      ['ja,'.repeat(3400) + 'de;q=0.2', (tag) => tag === 'de'],
    ];
    for (const [header, expected] of cases) {
      const res = await page(path, { 'accept-language': header });
      const tag = String(res.headers['content-language']);
      expect({ header: header.slice(0, 40), status: res.status, tag, fits: expected(tag) }).toEqual({ header: header.slice(0, 40), status: 200, tag, fits: true }); // prettier-ignore
    }
  });

  it('for any Accept-Language: 200, in an offered language, the highest-q acceptable one when one is', async () => {
    const path = await linkPath(await registered());
    await fc.assert(
      fc.asyncProperty(acceptLanguageHeaders, async (header) => {
        const res = await request(h.baseUrl, path, { headers: { 'accept-language': header }, localAddress: ownAddress() });
        expect(res.status).toBe(200);
        const tag = String(res.headers['content-language']);
        expect(res.text).toContain(`<html lang="${tag}"`);
        expectChoiceFits(header, tag.split('-')[0]);
      }),
      { numRuns: 150 },
    );
  });

  it('offers the nine other languages as links', async () => {
    const res = await page(`${await linkPath(await registered())}?lang=de`);
    for (const lang of ['en', 'fr', 'es', 'it', 'nl', 'pt', 'pl', 'sv', 'da']) expect(res.text).toContain(`href="?lang=${lang}"`);
    expect(res.text).not.toContain('href="?lang=de"');
  });

  it('shows the Activate button to the issuer activation URL once delivered, and the support phone on an exception', async () => {
    const delivered = await registered(testKey);
    const deliveredPath = await linkPath(delivered, {}, testKey);
    expect((await request(h.baseUrl, `/v1/test_helpers/dispatches/${delivered}/deliver`, { method: 'POST', headers: bearer(testKey) })).status).toBe(200); // prettier-ignore
    const activate = await until(async () => {
      const res = await page(deliveredPath);
      return res.text.includes('href="https://acme.example/activate"') ? res : undefined;
    }, 'the Activate button');
    expect(activate.text).toContain('Activate your card');

    const failed = await registered(testKey);
    const failedPath = await linkPath(failed, {}, testKey);
    await request(h.baseUrl, `/v1/test_helpers/dispatches/${failed}/fail`, { headers: bearer(testKey), body: { reason: 'address_issue' } });
    const support = await until(async () => {
      const res = await page(failedPath);
      return res.text.includes('href="tel:+33142685300"') ? res : undefined;
    }, 'the support button');
    expect(support.text).toContain('Problem with the address');
  });

  it('follows the card: after each carrier event the next request shows its step and its timeline entry', async () => {
    const id = await registered(testKey);
    const path = await linkPath(id, { locale: 'en' }, testKey);
    const steps: Array<[string, string]> = [
      ['ship', 'In transit'],
      ['out_for_delivery', 'Out for delivery'],
    ];
    for (const [action, label] of steps) {
      expect((await request(h.baseUrl, `/v1/test_helpers/dispatches/${id}/${action}`, { method: 'POST', headers: bearer(testKey) })).status).toBe(200); // prettier-ignore
      const res = await until(async () => {
        const answer = await page(path);
        return currentStep(answer.text) === label && answer.text.includes(`<span class="event">${label}</span>`) ? answer : undefined;
      }, `the step ${label}`);
      expect(res.status).toBe(200);
    }
  });

  it('answers 404 naming no issuer for an unknown or malformed token', async () => {
    for (const path of ['/t/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', '/t/short', '/t/', '/t/a/b']) {
      const res = await page(path);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.text).not.toContain('Acme');
      expect(res.headers['content-security-policy']).toMatch(/^default-src 'none';/);
    }
  });

  it("answers 410 in the link's language with the issuer's support contact for a revoked link", async () => {
    const id = await registered();
    const res = await request(h.baseUrl, `/v1/dispatches/${id}/tracking_links`, { headers: bearer(key), body: { locale: 'de' } });
    await request(h.baseUrl, `/v1/dispatches/${id}/tracking_links/${res.body.id}`, { method: 'DELETE', headers: bearer(key) });
    const gone = await page(new URL(res.body.url).pathname);
    expect(gone.status).toBe(410);
    expect(gone.text).toContain('Dieser Link ist abgelaufen');
    expect(gone.text).toContain('Acme Bank');
    expect(gone.text).toContain('href="tel:+33142685300"');
  });

  it('answers 410 once the link has expired', async () => {
    const id = await registered();
    const res = await request(h.baseUrl, `/v1/dispatches/${id}/tracking_links`, { headers: bearer(key), body: {} });
    await h.pool.query(`UPDATE tracking_links SET expires_at = now() - interval '1 second' WHERE id = $1`, [res.body.id]);
    expect((await page(new URL(res.body.url).pathname)).status).toBe(410);
  });
});

describe('the postal-code gate', () => {
  it('shows only the issuer and a form until the right code is given', async () => {
    const path = await linkPath(await registered(), { require_postal_code: true });
    const res = await page(path);
    expect(res.status).toBe(200);
    expect(res.text).toContain('Acme Bank');
    expect(res.text).toContain('name="postal_code"');
    expect(res.text).toContain(`action="${path}"`);
    expect(res.text).not.toContain('aria-current="step"');
    expect(res.text).not.toMatch(/Your card/);
  });

  it('sets an HttpOnly SameSite=Strict cookie for the link path on the right code (normalised) and the page follows', async () => {
    const path = await linkPath(await registered(), { require_postal_code: true });
    const res = await postCode(path, ' 75 011 ');
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(path);
    const cookie = (res.headers['set-cookie'] ?? [])[0];
    expect(cookie).toMatch(/^cds_tracking_pass=[A-Za-z0-9_-]{43}; /);
    expect(cookie).toContain(`path=${path}`);
    expect(cookie).toMatch(/; httponly/i);
    expect(cookie).toMatch(/; samesite=strict/i);
    expect(cookie).toMatch(/; expires=/);
    const after = await page(path, { cookie: cookie.split(';')[0] });
    expect(currentStep(after.text)).toBe('Sent');
  });

  it('marks the cookie Secure with a __Secure- name, and sends HSTS, when PUBLIC_BASE_URL is https (the request itself plain http behind a proxy)', async () => {
    const https = await h.startExtraApi({ PUBLIC_BASE_URL: 'https://track.example.test' });
    const path = await linkPath(await registered(), { require_postal_code: true });
    const res = await request(https.baseUrl, path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `postal_code=${POSTAL_CODE}`,
    });
    expect(res.status).toBe(303);
    const cookie = (res.headers['set-cookie'] ?? [])[0];
    expect(cookie).toMatch(/^__Secure-cds_tracking_pass=/);
    expect(cookie).toMatch(/; secure/i);
    expect(res.headers['strict-transport-security']).toBe('max-age=31536000');
  });

  it('shows the form again with an error for a wrong code, and sets no cookie', async () => {
    const path = await linkPath(await registered(), { require_postal_code: true });
    const res = await postCode(path, '99999');
    expect(res.status).toBe(200);
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(res.text).toContain('role="alert"');
  });

  it('answers 429 to every attempt after five wrong codes within 15 minutes, the right one included', async () => {
    const path = await linkPath(await registered(), { require_postal_code: true });
    for (let i = 0; i < 5; i++) expect((await postCode(path, `0000${i}`)).status).toBe(200);
    const right = await postCode(path, POSTAL_CODE);
    expect(right.status).toBe(429);
    expect(right.headers['set-cookie']).toBeUndefined();
    expect(right.text).toContain('Too many attempts');
  });

  it('counts wrong codes across API processes', async () => {
    const other = await h.startExtraApi();
    const path = await linkPath(await registered(), { require_postal_code: true });
    const postTo = (baseUrl: string, code: string) =>
      request(baseUrl, path, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `postal_code=${code}`,
      });
    for (let i = 0; i < 5; i++) expect((await postTo(i % 2 ? other.baseUrl : h.baseUrl, `0000${i}`)).status).toBe(200);
    expect((await postTo(other.baseUrl, POSTAL_CODE)).status).toBe(429);
  });

  it('does not reset the count of wrong codes on a right one', async () => {
    const path = await linkPath(await registered(), { require_postal_code: true });
    for (let i = 0; i < 4; i++) await postCode(path, `0000${i}`);
    expect((await postCode(path, POSTAL_CODE)).status).toBe(303);
    expect((await postCode(path, '00009')).status).toBe(200);
    expect((await postCode(path, POSTAL_CODE)).status).toBe(429);
  });

  it('refuses a cookie of another link', async () => {
    const id = await registered();
    const first = await linkPath(id, { require_postal_code: true });
    const second = await linkPath(id, { require_postal_code: true });
    const cookie = ((await postCode(first, POSTAL_CODE)).headers['set-cookie'] ?? [])[0].split(';')[0];
    expect((await page(second, { cookie })).text).toContain('name="postal_code"');
  });
});

describe('the per-IP limit (TRACKING_PAGE_RATE_PER_MINUTE)', () => {
  it('answers a 429 page with Retry-After past the limit, the stylesheet not counted', async () => {
    const limited = await h.startExtraApi({ TRACKING_PAGE_RATE_PER_MINUTE: '3' });
    const path = await linkPath(await registered());
    const localAddress = ownAddress();
    const html = (await request(limited.baseUrl, path, { localAddress })).text;
    const stylesheet = /<link rel="stylesheet" href="([^"]+)"/.exec(html)![1];
    for (let i = 0; i < 5; i++) expect((await request(limited.baseUrl, stylesheet, { localAddress })).status).toBe(200);
    expect((await request(limited.baseUrl, path, { localAddress })).status).toBe(200);
    expect((await request(limited.baseUrl, '/t/unknown', { localAddress })).status).toBe(404);
    const limitedBefore = valueOf(await scrape(`${h.baseUrl}/metrics`), 'cds_tracking_page_views_total', { outcome: 'limited' });
    const refused = await request(limited.baseUrl, path, { localAddress });
    expect(valueOf(await scrape(`${h.baseUrl}/metrics`), 'cds_tracking_page_views_total', { outcome: 'limited' })).toBe(limitedBefore + 1);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.text).toContain('Too many attempts');
    expect(refused.text).not.toContain('Acme');
    expect((await request(limited.baseUrl, path, { localAddress: ownAddress() })).status).toBe(200);
  });
});

describe('cds_tracking_page_views_total', () => {
  it('counts each answer by outcome: ok, gate, not_found, gone', async () => {
    const metric = async (outcome: string) => valueOf(await scrape(`${h.baseUrl}/metrics`), 'cds_tracking_page_views_total', { outcome });
    const before = Object.fromEntries(await Promise.all(['ok', 'gate', 'not_found', 'gone'].map(async (o) => [o, await metric(o)])));
    const id = await registered();
    await page(await linkPath(id));
    await page(await linkPath(id, { require_postal_code: true }));
    await page('/t/nothing-here');
    const res = await request(h.baseUrl, `/v1/dispatches/${id}/tracking_links`, { headers: bearer(key), body: {} });
    await request(h.baseUrl, `/v1/dispatches/${id}/tracking_links/${res.body.id}`, { method: 'DELETE', headers: bearer(key) });
    await page(new URL(res.body.url).pathname);
    for (const outcome of ['ok', 'gate', 'not_found', 'gone']) expect(await metric(outcome)).toBe(before[outcome] + 1);
    const metricsText = (await request(h.baseUrl, '/metrics')).text;
    expect(metricsText).not.toMatch(/\/t\/[A-Za-z0-9_-]{43}/);
  });
});
