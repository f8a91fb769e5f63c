// The common HTTP contract (docs/http-contract.md): request ids, one error shape, 404/405 for unknown
// routes and methods, 500 with request_id, 503 on writes when Temporal is unreachable, /healthz, /readyz.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startApi, type RunningApi } from '../../api/server.js';
import { createPool, type Pool } from '../../db/pool.js';
import { startHarness, testLogger, type Harness } from '../support/harness.js';
import { UNREACHABLE_CLOSE_MS, unreachableTemporal } from '../support/unreachable-temporal.js';
import { bearer, registrationFor, request } from './http.js';

let h: Harness;
let key: string;

beforeAll(async () => {
  h = await startHarness();
  key = (await h.createKey(await h.createIssuer('Contract Issuer'))).key;
});

afterAll(async () => {
  await h?.stop();
});

describe('X-Request-Id', () => {
  it('is generated when the request has none', async () => {
    const res = await request(h.baseUrl, `/v1/status/${randomUUID()}`, { headers: bearer(key) });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("echoes the caller's own id", async () => {
    const res = await request(h.baseUrl, `/v1/status/${randomUUID()}`, { headers: { ...bearer(key), 'x-request-id': 'req_abc-123' } });
    expect(res.headers['x-request-id']).toBe('req_abc-123');
  });

  it('replaces an id that is too long or holds odd characters', async () => {
    const res = await request(h.baseUrl, '/healthz', { headers: { 'x-request-id': 'a b<script>' } });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('is on error responses too', async () => {
    const res = await request(h.baseUrl, '/v1/status/nope');
    expect(res.status).toBe(401);
    expect(res.headers['x-request-id']).toBeTruthy();
  });
});

describe('unknown routes and methods', () => {
  it('returns 404 not_found for an unknown path', async () => {
    const res = await request(h.baseUrl, '/v1/statuses', { headers: bearer(key) });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not_found', message: expect.any(String) });
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
  });

  it('returns 405 method_not_allowed with an Allow header', async () => {
    const res = await request(h.baseUrl, `/v1/status/${randomUUID()}`, { method: 'PUT', headers: bearer(key) });
    expect(res.status).toBe(405);
    expect(res.body.error).toBe('method_not_allowed');
    expect(res.headers.allow).toMatch(/GET/);
  });

  it('returns 401 before 404 for an unknown path without a key', async () => {
    expect((await request(h.baseUrl, '/v1/statuses')).status).toBe(401);
  });
});

describe('request bodies are UTF-8 JSON', () => {
  const register = (contentType: string) =>
    request(h.baseUrl, '/v1/dispatches', { headers: { ...bearer(key), 'content-type': contentType }, body: registrationFor(randomUUID()) });

  it.each(['latin1', 'iso-8859-1', 'utf-16'])('refuses a body declared charset=%s with 415 naming the charset', async (charset) => {
    const res = await register(`application/json; charset=${charset}`);
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ error: 'unsupported_media_type', message: expect.stringContaining(`charset=${charset}`) });
  });

  it.each(['application/json', 'application/json; charset=utf-8', 'application/json; charset=UTF-8', 'application/json;charset="utf-8"'])(
    'takes a body declared %s',
    async (contentType) => {
      expect((await register(contentType)).status).toBe(201);
    },
  );
});

describe('health', () => {
  it('/healthz answers 200 without a key or rate-limit headers', async () => {
    const res = await request(h.baseUrl, '/healthz');
    expect(res.status).toBe(200);
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('/readyz answers 200 when Postgres and Temporal are reachable', async () => {
    const res = await request(h.baseUrl, '/readyz');
    expect(res.status).toBe(200);
    expect(res.body.checks).toEqual({ database: true, temporal: true });
  });
});

describe('when Postgres is unreachable', () => {
  let pool: Pool;
  let api: RunningApi;

  beforeAll(async () => {
    // A pool aimed at a port where no Postgres listens: every query fails, as in an outage.
    pool = createPool('postgres://nobody:nothing@127.0.0.1:1/none');
    api = await startApi({ config: h.config, pool, temporal: h.temporal, logger: testLogger('api-no-db'), port: 0, host: '127.0.0.1' });
  });

  afterAll(async () => {
    await api?.close();
    await pool?.end();
  });

  // docs/http-contract.md: 503 service_unavailable for Postgres unreachable, as for Temporal (until
  // api/errors.ts mapped connection failures, this answered 500 internal_error).
  it('returns 503 service_unavailable with the request id in the body and the usual headers', async () => {
    const res = await request(api.url, `/v1/status/${randomUUID()}`, { headers: { ...bearer(key), 'x-request-id': 'support-me-42' } });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'service_unavailable', message: expect.any(String), request_id: 'support-me-42' });
    expect(res.headers['x-request-id']).toBe('support-me-42');
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
    expect(res.headers['x-ratelimit-remaining']).toBeDefined();
    expect(res.headers['x-ratelimit-reset']).toBeDefined();
  });

  it('does not leak the underlying error in the message', async () => {
    const res = await request(api.url, `/v1/status/${randomUUID()}`, { headers: bearer(key) });
    expect(res.body.message).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
  });

  it('/readyz answers 503 naming the database', async () => {
    const res = await request(api.url, '/readyz');
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('service_unavailable');
    expect(res.body.message).toMatch(/database/);
    expect(res.body.request_id).toBeDefined();
  });
});

describe('when Temporal is unreachable', () => {
  let unreachable: ReturnType<typeof unreachableTemporal>;
  let api: RunningApi;

  beforeAll(async () => {
    unreachable = unreachableTemporal(h.config.TEMPORAL_NAMESPACE);
    api = await startApi({ config: h.config, pool: h.pool, temporal: unreachable.temporal, logger: testLogger('api-no-temporal'), port: 0, host: '127.0.0.1' }); // prettier-ignore
  });

  afterAll(async () => {
    await api?.close();
    await unreachable?.close();
  }, UNREACHABLE_CLOSE_MS + 5_000);

  it('answers a registration with 503 service_unavailable', async () => {
    const res = await request(api.url, '/v1/dispatches', { headers: bearer(key), body: registrationFor(randomUUID()) });
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('service_unavailable');
    expect(res.body.request_id).toBeDefined();
  }, 30_000);

  it('answers each item of a batch with service_unavailable, the batch itself with 200', async () => {
    const dispatches = Array.from({ length: 12 }, () => registrationFor(randomUUID()));
    const res = await request(api.url, '/v1/dispatches/batch', { headers: bearer(key), body: { dispatches } });
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(12);
    for (const result of res.body.results) expect(result).toMatchObject({ result: 'error', error: { error: 'service_unavailable' } });
  }, 60_000);

  // Status reads need only Postgres: a pod that fell out of its load balancer whenever Temporal did
  // would refuse them too, on every pod at once (docs/runbook.md "Temporal unreachable").
  it('/readyz stays 200, degraded, naming temporal as down', async () => {
    const res = await request(api.url, '/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'degraded', checks: { database: true, temporal: false } });
  });

  it('still answers a status read from the projection', async () => {
    const id = randomUUID();
    expect((await request(h.baseUrl, '/v1/dispatches', { headers: bearer(key), body: registrationFor(id) })).status).toBe(201);
    const res = await request(api.url, `/v1/status/${id}`, { headers: bearer(key) });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(id);
  }, 30_000);

  it('reports temporal as down in cds_dependency_up after a readiness check', async () => {
    await request(api.url, '/readyz');
    const metrics = await request(api.url, '/metrics');
    expect(metrics.text).toMatch(/^cds_dependency_up\{dependency="temporal"\} 0$/m);
    expect(metrics.text).toMatch(/^cds_dependency_up\{dependency="database"\} 1$/m);
  });
});

describe('GET /v1/openapi.json', () => {
  it('serves the OpenAPI document without a key', async () => {
    const res = await request(h.baseUrl, '/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
  });
});
