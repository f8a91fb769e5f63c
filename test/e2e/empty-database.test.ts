// A service on a fresh database (migrated, nothing else: the first day of an installation, or a new
// issuer's first hour): every list and report answers 200 with nothing in it, never a 500 or a crash.
// Through the real API, the dashboard as a signed-in user reads it over HTTP, and the operator CLI's
// reading commands with --json (docs/admin-cli.md), each against a database of this file's own.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createDashboardUser, setPasswordWithToken } from '../../db/dashboard.js';
import { hashPassword, SET_PASSWORD_LINK_TTL_MS } from '../../dashboard/passwords.js';
import { bearer, request } from '../api/http.js';
import { runCli } from '../support/cli.js';
import { startHarness, type Harness } from '../support/harness.js';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratch-database.js';

let database: ScratchDatabase;
let h: Harness;

beforeAll(async () => {
  database = await createScratchDatabase('empty_db', { migrate: true });
  // No worker: its schedules belong to the namespace the other test files share.
  h = await startHarness({ worker: false, env: { DATABASE_URL: database.url } });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  await database?.drop();
});

describe('before any issuer exists', () => {
  it.each(['/healthz', '/readyz', '/metrics', '/v1/openapi.json'])('answers GET %s with 200', async (path) => {
    expect((await request(h.baseUrl, path)).status).toBe(200);
  });

  it.each([
    ['issuer list', ['issuer', 'list'], { data: [] }],
    ['webhook list', ['webhook', 'list'], { data: [] }],
    ['deliveries list', ['deliveries', 'list'], { data: [] }],
    ['deliveries list --undeliverable', ['deliveries', 'list', '--undeliverable'], { data: [] }],
    ['conditions list', ['conditions', 'list'], { data: [] }],
    [
      'predictions quality',
      ['predictions', 'quality'],
      expect.objectContaining({ data: [], dispatches: 0, not_learned: expect.objectContaining({ dispatches: 0 }) }),
    ],
  ])('prints an empty result for `%s --json` and exits 0', async (_, args, expected) => {
    const result = await runCli([...args, '--json'], { DATABASE_URL: database.url });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(result.stdout)).toEqual(expected);
  });
});

describe('an issuer with a key and nothing else', () => {
  let issuerId: string;
  let key: string;

  beforeAll(async () => {
    issuerId = await h.createIssuer('Empty Issuer');
    key = (await h.createKey(issuerId)).key;
  });

  it.each(['/v1/dispatches', '/v1/events', '/v1/webhook_endpoints', '/v1/tracking_feeds'])(
    'answers GET %s with 200 and an empty page',
    async (path) => {
      const res = await request(h.baseUrl, path, { headers: bearer(key) });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: [], next_cursor: null });
    },
  );

  it('answers GET /v1/tracking_feeds/{id}/unmatched of a feed that has received nothing with 200 and an empty page', async () => {
    const feed = await request(h.baseUrl, '/v1/tracking_feeds', { headers: bearer(key), body: { provider: 'shippo' } });
    expect(feed.status).toBe(201);
    const res = await request(h.baseUrl, `/v1/tracking_feeds/${feed.body.id}/unmatched`, { headers: bearer(key) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [], next_cursor: null });
  });

  it('answers GET /v1/tracking_page with 200 and every branding field null, none being set', async () => {
    const res = await request(h.baseUrl, '/v1/tracking_page', { headers: bearer(key) });
    expect(res.status).toBe(200);
    expect(Object.values(res.body).every((value) => value === null)).toBe(true);
  });

  it.each([
    ['key list --issuer', ['key', 'list', '--issuer'], { data: [expect.objectContaining({ issuer_id: expect.any(String) })] }],
    ['webhook list --issuer', ['webhook', 'list', '--issuer'], { data: [] }],
    ['predictions quality --issuer', ['predictions', 'quality', '--issuer'], expect.objectContaining({ data: [], dispatches: 0 })],
  ])('prints its result for `%s ID --json` and exits 0', async (_, args, expected) => {
    const result = await runCli([...args, issuerId, '--json'], { DATABASE_URL: database.url });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(result.stdout)).toEqual(expected);
  });

  describe('its dashboard user', () => {
    let cookie: string;

    beforeAll(async () => {
      const email = 'empty@example.test';
      const password = 'correct horse battery staple';
      const created = await createDashboardUser(h.pool, { issuerId, email, tokenTtlMs: SET_PASSWORD_LINK_TTL_MS });
      expect(await setPasswordWithToken(h.pool, created!.token, await hashPassword(password))).toBeTruthy();
      const form = await request(h.baseUrl, '/dashboard/sign-in');
      const formCookie = cookiesOf(form.headers['set-cookie']);
      const csrf = /name="_csrf" value="([^"]+)"/.exec(form.text)![1];
      const signedIn = await request(h.baseUrl, '/dashboard/sign-in', {
        headers: { cookie: formCookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ email, password, _csrf: csrf }).toString(),
      });
      expect(signedIn.status).toBe(303);
      cookie = cookiesOf(signedIn.headers['set-cookie']);
    });

    it.each([
      '/dashboard/webhooks',
      '/dashboard/deliveries',
      '/dashboard/dispatches',
      '/dashboard/prediction-quality',
      '/dashboard/api-keys',
      '/dashboard/settings/tracking-feeds',
      '/dashboard/settings/tracking-page',
    ])('shows %s with 200', async (path) => {
      const res = await request(h.baseUrl, path, { headers: { cookie } });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
    });
  });
});

function cookiesOf(setCookie: string[] | undefined): string {
  return (setCookie ?? []).map((line) => line.split(';')[0]).join('; ');
}
