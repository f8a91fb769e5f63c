// GET /v1/status/{id} checks in the order of docs/http-contract.md (401 → 429 → 400 → 404/403):
// a bad path id or `?locale=` is answered 400 even for a key without the `status:read` scope.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startHarness, type Harness } from '../support/harness.js';
import { bearer, request } from './http.js';

let h: Harness;
let writeOnly: string;

beforeAll(async () => {
  h = await startHarness();
  writeOnly = (await h.createKey(await h.createIssuer('Check Order Issuer'), { scopes: ['dispatches:write'] })).key;
});

afterAll(async () => {
  await h?.stop();
});

describe('GET /v1/status/{id} with a key without status:read', () => {
  it('answers 400 for a path id that is not a UUID v4, before 403 for the scope', async () => {
    const res = await request(h.baseUrl, '/v1/status/not-a-uuid', { headers: bearer(writeOnly) });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('bad_request');
  });

  it('answers 400 for a bad ?locale=, before 403 for the scope', async () => {
    const res = await request(h.baseUrl, `/v1/status/${randomUUID()}?locale=${'x'.repeat(300)}`, { headers: bearer(writeOnly) });
    expect(res.status).toBe(400);
  });

  it('answers 403 for a well-formed id', async () => {
    const res = await request(h.baseUrl, `/v1/status/${randomUUID()}`, { headers: bearer(writeOnly) });
    expect(res.status).toBe(403);
  });
});
