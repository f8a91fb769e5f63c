// Tracking links and the tracking page's branding as an API (docs/tracking-page.md
// "Tracking links and the tracking page"): create (the token once, in `url`, from PUBLIC_BASE_URL and
// never from Host; stored only as its SHA-256), the expiry's bounds, list (no token, no url), revoke
// (204, again 204, unknown 404), scope `dispatches:write`, another issuer's dispatch 403, test mode,
// and the branding's rules (https URLs, E.164, the accent colour's contrast with white).
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startHarness, type Harness } from '../support/harness.js';
import { bearer, registrationFor, request, type TestResponse } from './http.js';

const PUBLIC_BASE_URL = 'https://track.example.test';
const DAY = 86_400_000;

let h: Harness;
let key: string;
let testKey: string;
let readOnlyKey: string;
let otherIssuerKey: string;

const call = (method: string, path: string, body?: unknown, withKey = key, headers: Record<string, string> = {}): Promise<TestResponse> =>
  request(h.baseUrl, path, { method, headers: { ...bearer(withKey), ...headers }, body });

async function registered(withKey = key, overrides: Record<string, unknown> = {}): Promise<string> {
  const id = randomUUID();
  const res = await call('POST', '/v1/dispatches', registrationFor(id, overrides), withKey);
  expect(res.status).toBe(201);
  return id;
}

const createLink = (id: string, body?: unknown, withKey = key) => call('POST', `/v1/dispatches/${id}/tracking_links`, body, withKey);

beforeAll(async () => {
  h = await startHarness({ env: { PUBLIC_BASE_URL } });
  const issuer = await h.createIssuer('Links Issuer');
  key = (await h.createKey(issuer)).key;
  testKey = (await h.createKey(issuer, { mode: 'test' })).key;
  readOnlyKey = (await h.createKey(issuer, { scopes: ['status:read', 'events:write'] })).key;
  otherIssuerKey = (await h.createKey(await h.createIssuer('Other Issuer'))).key;
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

describe('POST /v1/dispatches/{id}/tracking_links', () => {
  it('creates a link whose url is PUBLIC_BASE_URL/t/ and a 43-character base64url token, expiring in 60 days by default', async () => {
    const id = await registered(key, { locale: 'de-AT' });
    const before = Date.now();
    const res = await createLink(id);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^tl_[0-9A-Za-z]{16}$/),
      url: expect.stringMatching(/^https:\/\/track\.example\.test\/t\/[A-Za-z0-9_-]{43}$/),
      expires_at: expect.any(String),
      locale: 'de-AT',
      require_postal_code: false,
      created_at: expect.any(String),
    });
    const lifetime = Date.parse(res.body.expires_at) - before;
    expect(lifetime).toBeGreaterThanOrEqual(60 * DAY - 5000);
    expect(lifetime).toBeLessThanOrEqual(60 * DAY + 5000);
  });

  it('stores the token only as its SHA-256', async () => {
    const res = await createLink(await registered());
    const token = res.body.url.split('/t/')[1];
    const { rows } = await h.pool.query('SELECT * FROM tracking_links WHERE id = $1', [res.body.id]);
    expect(rows[0].token_hash).toEqual(createHash('sha256').update(token).digest());
    expect(JSON.stringify(rows[0])).not.toContain(token);
  });

  it('takes the url from PUBLIC_BASE_URL, never from the request Host header', async () => {
    const id = await registered();
    const res = await call('POST', `/v1/dispatches/${id}/tracking_links`, {}, key, {
      host: 'attacker.example',
      'x-forwarded-host': 'attacker.example',
    });
    expect(res.status).toBe(201);
    expect(res.body.url.startsWith(`${PUBLIC_BASE_URL}/t/`)).toBe(true);
  });

  it('keeps the locale and require_postal_code it is given', async () => {
    const res = await createLink(await registered(), { locale: 'fr-ca', require_postal_code: true });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ locale: 'fr-CA', require_postal_code: true });
  });

  it('accepts an expires_at a minute ahead and one 179 days ahead', async () => {
    const id = await registered();
    for (const ahead of [60_000, 179 * DAY]) {
      const expiresAt = new Date(Date.now() + ahead).toISOString();
      const res = await createLink(id, { expires_at: expiresAt });
      expect(res.status).toBe(201);
      expect(res.body.expires_at).toBe(expiresAt);
    }
  });

  it('returns 400 naming expires_at when it is in the past or more than 180 days ahead', async () => {
    const id = await registered();
    for (const at of [Date.now() - 1000, Date.now() + 181 * DAY]) {
      const res = await createLink(id, { expires_at: new Date(at).toISOString() });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^expires_at: /);
    }
  });

  it('returns 400 for an unknown field or a bad locale', async () => {
    const id = await registered();
    expect((await createLink(id, { token: 'mine' })).status).toBe(400);
    expect((await createLink(id, { locale: '00' })).body.message).toMatch(/locale/);
  });

  it('returns 400 when id is not a UUID v4', async () => {
    expect((await createLink('not-a-uuid')).status).toBe(400);
  });

  it("returns 403 for another issuer's dispatch and 404 for an unknown one", async () => {
    const id = await registered();
    expect((await createLink(id, {}, otherIssuerKey)).status).toBe(403);
    expect((await createLink(randomUUID())).status).toBe(404);
  });

  it('returns 403 for a key without dispatches:write', async () => {
    const res = await createLink(await registered(), {}, readOnlyKey);
    expect(res.status).toBe(403);
    expect(res.body.message).toContain('dispatches:write');
  });

  it('returns 401 without a key', async () => {
    const id = await registered();
    expect((await request(h.baseUrl, `/v1/dispatches/${id}/tracking_links`, { method: 'POST' })).status).toBe(401);
  });

  it("works with a test key for a test dispatch, and the other mode's dispatch is 404", async () => {
    const testId = await registered(testKey);
    expect((await createLink(testId, {}, testKey)).status).toBe(201);
    expect((await createLink(testId, {}, key)).status).toBe(404);
    expect((await createLink(await registered(), {}, testKey)).status).toBe(404);
  });
});

describe('GET /v1/dispatches/{id}/tracking_links', () => {
  it('lists the links newest first without token or url, with revoked_at', async () => {
    const id = await registered();
    const first = (await createLink(id)).body;
    const second = (await createLink(id, { require_postal_code: true })).body;
    await call('DELETE', `/v1/dispatches/${id}/tracking_links/${first.id}`);
    const res = await call('GET', `/v1/dispatches/${id}/tracking_links`);
    expect(res.status).toBe(200);
    expect(res.body.next_cursor).toBeNull();
    expect(res.body.data.map((link: any) => link.id)).toEqual([second.id, first.id]);
    expect(res.body.data[1].revoked_at).toEqual(expect.any(String));
    expect(res.body.data[0].revoked_at).toBeNull();
    for (const link of res.body.data) expect(Object.keys(link).sort()).toEqual(['created_at', 'expires_at', 'id', 'locale', 'require_postal_code', 'revoked_at']); // prettier-ignore
    expect(res.text).not.toContain('/t/');
  });

  it('pages with next_cursor', async () => {
    const id = await registered();
    for (let i = 0; i < 3; i++) await createLink(id);
    const page1 = await call('GET', `/v1/dispatches/${id}/tracking_links?limit=2`);
    expect(page1.body.data).toHaveLength(2);
    const page2 = await call('GET', `/v1/dispatches/${id}/tracking_links?limit=2&cursor=${page1.body.next_cursor}`);
    expect(page2.body.data).toHaveLength(1);
    expect(page2.body.next_cursor).toBeNull();
  });

  it("returns 403 for another issuer's dispatch and for a key without dispatches:write", async () => {
    const id = await registered();
    expect((await call('GET', `/v1/dispatches/${id}/tracking_links`, undefined, otherIssuerKey)).status).toBe(403);
    expect((await call('GET', `/v1/dispatches/${id}/tracking_links`, undefined, readOnlyKey)).status).toBe(403);
  });

  it('returns 400 for a bad limit or cursor', async () => {
    const id = await registered();
    expect((await call('GET', `/v1/dispatches/${id}/tracking_links?limit=0`)).status).toBe(400);
    expect((await call('GET', `/v1/dispatches/${id}/tracking_links?cursor=nope`)).status).toBe(400);
  });
});

describe('DELETE /v1/dispatches/{id}/tracking_links/{link_id}', () => {
  it('revokes with 204, again 204, and the page answers 410 at once', async () => {
    const id = await registered();
    const link = (await createLink(id)).body;
    const path = new URL(link.url).pathname;
    expect((await request(h.baseUrl, path)).status).toBe(200);
    expect((await call('DELETE', `/v1/dispatches/${id}/tracking_links/${link.id}`)).status).toBe(204);
    expect((await request(h.baseUrl, path)).status).toBe(410);
    expect((await call('DELETE', `/v1/dispatches/${id}/tracking_links/${link.id}`)).status).toBe(204);
  });

  it('revokes on every API process at once', async () => {
    const id = await registered();
    const link = (await createLink(id)).body;
    const other = await h.startExtraApi({ PUBLIC_BASE_URL });
    const path = new URL(link.url).pathname;
    expect((await request(other.baseUrl, path)).status).toBe(200);
    await call('DELETE', `/v1/dispatches/${id}/tracking_links/${link.id}`);
    expect((await request(other.baseUrl, path)).status).toBe(410);
  });

  it("returns 404 for an unknown link, or another dispatch's link", async () => {
    const id = await registered();
    const link = (await createLink(await registered())).body;
    expect((await call('DELETE', `/v1/dispatches/${id}/tracking_links/tl_0000000000000000`)).status).toBe(404);
    expect((await call('DELETE', `/v1/dispatches/${id}/tracking_links/${link.id}`)).status).toBe(404);
  });

  it("returns 400 for a malformed link id, 403 for another issuer's dispatch or a key without the scope", async () => {
    const id = await registered();
    const link = (await createLink(id)).body;
    expect((await call('DELETE', `/v1/dispatches/${id}/tracking_links/nope`)).status).toBe(400);
    expect((await call('DELETE', `/v1/dispatches/${id}/tracking_links/${link.id}`, undefined, otherIssuerKey)).status).toBe(403);
    expect((await call('DELETE', `/v1/dispatches/${id}/tracking_links/${link.id}`, undefined, readOnlyKey)).status).toBe(403);
  });
});

describe('GET and PATCH /v1/tracking_page', () => {
  it('answers every field null before any branding', async () => {
    const fresh = (await h.createKey(await h.createIssuer('Unbranded'))).key;
    const res = await call('GET', '/v1/tracking_page', undefined, fresh);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ display_name: null, accent_color: null, activation_url: null, support_url: null, support_phone: null });
  });

  it('changes only the fields it is given, and null clears one', async () => {
    const own = (await h.createKey(await h.createIssuer('Branded'))).key;
    const first = await call('PATCH', '/v1/tracking_page', { display_name: ' Acme Bank ', accent_color: '#0B5CAD', support_phone: '+33142685300' }, own); // prettier-ignore
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ display_name: 'Acme Bank', accent_color: '#0b5cad', activation_url: null, support_url: null, support_phone: '+33142685300' }); // prettier-ignore
    const second = await call('PATCH', '/v1/tracking_page', { support_url: 'https://acme.example/help', support_phone: null }, own);
    expect(second.body).toEqual({ display_name: 'Acme Bank', accent_color: '#0b5cad', activation_url: null, support_url: 'https://acme.example/help', support_phone: null }); // prettier-ignore
    expect((await call('GET', '/v1/tracking_page', undefined, own)).body).toEqual(second.body);
  });

  it('returns 400 naming accent_color when white text on it is below 4.5:1', async () => {
    const res = await call('PATCH', '/v1/tracking_page', { accent_color: '#ffcc00' });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^accent_color: .*4\.5:1/);
  });

  it('returns 400 naming the field for an http URL, a phone that is not E.164 or a colour that is not #rrggbb', async () => {
    for (const [field, value] of [
      ['activation_url', 'http://acme.example/activate'],
      ['support_url', 'javascript:alert(1)'],
      ['support_phone', '01 42 68 53 00'],
      ['accent_color', 'navy'],
    ]) {
      const res = await call('PATCH', '/v1/tracking_page', { [field]: value });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(new RegExp(`^${field}: `));
    }
  });

  it('returns 403 for a key without dispatches:write', async () => {
    expect((await call('GET', '/v1/tracking_page', undefined, readOnlyKey)).status).toBe(403);
    expect((await call('PATCH', '/v1/tracking_page', { display_name: 'X' }, readOnlyKey)).status).toBe(403);
  });
});
