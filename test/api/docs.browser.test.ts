// GET /docs (docs/security.md "The API reference"): Redoc, served by our own server,
// renders the OpenAPI document in Chromium; no request leaves 127.0.0.1, the Content-Security-Policy
// blocks nothing the page needs, and neither the page nor its script needs a key or takes from a
// rate-limit window.
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startBrowserHarness, type BrowserHarness } from '../dashboard/support.js';
import { request } from './http.js';

let h: BrowserHarness;

beforeAll(async () => {
  h = await startBrowserHarness();
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

describe('GET /docs', () => {
  it('renders the operation list from /v1/openapi.json with no request leaving 127.0.0.1', async () => {
    const page = await h.newPage();
    const requested: string[] = [];
    const blocked: string[] = [];
    page.on('request', (req) => requested.push(req.url()));
    page.on('console', (message) => {
      if (/Content.Security.Policy|Refused to/i.test(message.text())) blocked.push(message.text());
    });
    const res = await page.goto('/docs');
    expect(res?.status()).toBe(200);
    await page.getByText('The delivery status record of one dispatched card').first().waitFor({ timeout: 30_000 });
    await expect(page.getByText('Register a dispatch so tracking begins').first().isVisible()).resolves.toBe(true);
    // The webhooks are in the reference too.
    await expect(page.getByText('Sent when the card was delivered').first().count()).resolves.toBeGreaterThan(0);

    expect(requested).toEqual(expect.arrayContaining([h.url('/docs'), h.url('/docs/redoc.standalone.js'), h.url('/v1/openapi.json')]));
    const elsewhere = requested.filter((url) => !/^(data|blob):/.test(url) && new URL(url).hostname !== '127.0.0.1');
    expect(elsewhere).toEqual([]);
    expect(blocked).toEqual([]);
  });

  it("sends a Content-Security-Policy that allows scripts and connections from 'self' only", async () => {
    const res = await request(h.baseUrl, '/docs');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    const policy = Object.fromEntries(
      String(res.headers['content-security-policy'])
        .split(';')
        .map((directive) => directive.trim().split(/\s+/))
        .map(([name, ...sources]) => [name, sources]),
    );
    expect(policy['default-src']).toEqual(["'none'"]);
    for (const directive of ['script-src', 'connect-src', 'font-src']) expect(policy[directive]).toEqual(["'self'"]);
    expect(policy['img-src']).toEqual(["'self'", 'data:']);
    expect(policy['style-src']).toEqual(["'self'", "'unsafe-inline'"]);
  });

  it('needs no key and takes nothing from the client IP window, for the page and its script', async () => {
    // A client address of this test's own: 127.0.0.1's window is shared by every test file.
    const localAddress = `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
    for (const path of ['/docs', '/docs/redoc.standalone.js']) {
      const res = await request(h.baseUrl, path, { localAddress });
      expect(res.status).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
    const script = await request(h.baseUrl, '/docs/redoc.standalone.js');
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
    expect(script.text.length).toBeGreaterThan(100_000);
  });
});
