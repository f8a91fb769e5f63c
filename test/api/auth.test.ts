// API keys (docs/security.md "API keys"): exact Bearer format, checksum, revocation, scopes.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { generateKey } from '../../domain/api-keys.js';
import { startHarness, type Harness } from '../support/harness.js';
import { bearer, registrationFor, request } from './http.js';

let h: Harness;
let issuer: string;
let key: string;
let dispatchId: string;

const status = (headers: Record<string, string>) => request(h.baseUrl, `/v1/status/${dispatchId}`, { headers });

beforeAll(async () => {
  // The shortest cache the config allows is irrelevant here: revocation must work within the 5 s bound
  // with the default TTL too, so the default is kept.
  h = await startHarness();
  issuer = await h.createIssuer('Auth Issuer');
  key = (await h.createKey(issuer)).key;
  dispatchId = randomUUID();
  const created = await request(h.baseUrl, '/v1/dispatches', { headers: bearer(key), body: registrationFor(dispatchId) });
  expect(created.status).toBe(201);
});

afterAll(async () => {
  await h?.stop();
});

describe('Authorization header', () => {
  it('accepts "Bearer <key>"', async () => {
    expect((await status(bearer(key))).status).toBe(200);
  });

  it('returns 401 when the header is missing', async () => {
    const res = await status({});
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'unauthorized', message: expect.any(String) });
  });

  it('returns 401 for "bearer x"', async () => {
    expect((await status({ authorization: 'bearer x' })).status).toBe(401);
  });

  it('returns 401 for a lower-case scheme with a valid key', async () => {
    expect((await status({ authorization: `bearer ${key}` })).status).toBe(401);
  });

  it('returns 401 when two spaces separate Bearer and the key', async () => {
    expect((await status({ authorization: `Bearer  ${key}` })).status).toBe(401);
  });

  it('returns 401 when whitespace and more text follow the key', async () => {
    expect((await status({ authorization: `Bearer ${key} x` })).status).toBe(401);
    expect((await status({ authorization: `Bearer ${key}\tx` })).status).toBe(401);
  });

  it('returns 401 when whitespace sits between the key and a trailing comma', async () => {
    expect((await status({ authorization: `Bearer ${key} ,` })).status).toBe(401);
  });

  // Whitespace at the very end of a header line is not part of the field value (RFC 9110 §5.5):
  // Node's HTTP parser strips it before any application code runs, so no server can refuse it.
  it('sees a header line ending in whitespace without that whitespace, as HTTP defines', async () => {
    expect((await status({ authorization: `Bearer ${key} ` })).status).toBe(200);
  });

  it('returns 401 for a key whose checksum does not match', async () => {
    const last = key.at(-1) === 'A' ? 'B' : 'A';
    expect((await status(bearer(key.slice(0, -1) + last))).status).toBe(401);
  });

  it('returns 401 for a well-formed key that was never issued', async () => {
    expect((await status(bearer(generateKey('live').key))).status).toBe(401);
  });

  it('never echoes the key in the error body', async () => {
    const res = await status(bearer(key.slice(0, -1) + (key.at(-1) === 'A' ? 'B' : 'A')));
    expect(res.text).not.toContain(key.slice(9, 30));
  });
});

describe('revocation', () => {
  it('returns 401 for a revoked key within 5 seconds of its revocation', async () => {
    const doomed = await h.createKey(issuer);
    expect((await status(bearer(doomed.key))).status).toBe(200); // now cached
    await h.revokeKey(doomed.id);
    const revokedAt = Date.now();
    let res = await status(bearer(doomed.key));
    while (res.status === 200 && Date.now() - revokedAt < 6_000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      res = await status(bearer(doomed.key));
    }
    expect(res.status).toBe(401);
    expect(Date.now() - revokedAt).toBeLessThanOrEqual(5_000);
  });

  it('returns 401 for a key revoked before its first use', async () => {
    const revoked = await h.createKey(issuer);
    await h.revokeKey(revoked.id);
    expect((await status(bearer(revoked.key))).status).toBe(401);
  });
});

describe('scopes', () => {
  it('returns 403 on GET /v1/status for a key without status:read', async () => {
    const writer = await h.createKey(issuer, { scopes: ['dispatches:write', 'events:write'] });
    const res = await status(bearer(writer.key));
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
  });

  it('returns 403 on POST /v1/dispatches for a key without dispatches:write', async () => {
    const reader = await h.createKey(issuer, { scopes: ['status:read'] });
    const res = await request(h.baseUrl, '/v1/dispatches', { headers: bearer(reader.key), body: registrationFor(randomUUID()) });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
  });

  it('returns 403 on POST /v1/dispatches/{id}/events for a key without events:write', async () => {
    const reader = await h.createKey(issuer, { scopes: ['status:read'] });
    const res = await request(h.baseUrl, `/v1/dispatches/${dispatchId}/events`, {
      headers: bearer(reader.key),
      body: { status: 'in_transit', occurred_at: new Date().toISOString() },
    });
    expect(res.status).toBe(403);
  });
});

describe('last use', () => {
  it('records when a key was last used', async () => {
    const fresh = await h.createKey(issuer);
    expect((await status(bearer(fresh.key))).status).toBe(200);
    let lastUsed: Date | null = null;
    for (let i = 0; i < 20 && !lastUsed; i++) {
      const { rows } = await h.pool.query('SELECT last_used_at FROM api_keys WHERE id = $1', [fresh.id]);
      lastUsed = rows[0].last_used_at;
      if (!lastUsed) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(lastUsed).toBeInstanceOf(Date);
  });
});
