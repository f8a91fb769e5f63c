// The claim of an Idempotency-Key lasts IDEMPOTENCY_LOCK_MS (10 s) without news, so that the key of
// a request whose API process was killed is free again soon (test/e2e/api-crash.test.ts); a live
// request renews its claim every IDEMPOTENCY_RENEW_MS, so however long it runs (a batch of 1,000),
// no other process takes its key over meanwhile. The middleware (api/idempotency.ts) on a real
// HTTP server and the real Postgres, in front of a route that answers only when the test says so.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { idempotencyRequestHash, idempotent } from '../../api/idempotency.js';
import { jsonBody } from '../../api/middleware/json-body.js';
import { claimIdempotencyKey, IDEMPOTENCY_LOCK_MS } from '../../db/idempotency-keys.js';
import { createPool, type Pool } from '../../db/pool.js';
import { requireTestEnv, testLogger } from '../support/env.js';
import { request } from './http.js';

let pool: Pool;
let server: http.Server;
let url: string;
let release: () => void = () => undefined;
const issuerId = `renewal-${randomUUID()}`;

beforeAll(async () => {
  pool = createPool(requireTestEnv('TEST_DATABASE_URL'), { applicationName: 'test-idempotency-renewal' });
  const app = new Koa();
  const router = new Router();
  router.post(
    '/v1/slow',
    async (ctx, next) => {
      ctx.state.apiKey = { id: 'key', issuerId, mode: 'live', scopes: [] };
      await next();
    },
    jsonBody(),
    idempotent(pool, testLogger('idempotency')),
    async (ctx) => {
      await new Promise<void>((resolve) => (release = resolve));
      ctx.body = { done: true };
    },
  );
  app.use(router.routes());
  server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  release();
  await new Promise((resolve) => server?.close(resolve));
  await pool?.query('DELETE FROM idempotency_keys WHERE issuer_id = $1', [issuerId]);
  await pool?.end();
});

describe('a request that runs longer than the Idempotency-Key lease', () => {
  it('keeps its key while it runs (another process gets in_flight), and its answer is then replayed', async () => {
    const body = { n: 1 };
    const scope = { issuerId, mode: 'live' as const, key: 'long-one' };
    const hash = idempotencyRequestHash('POST', '/v1/slow', body);
    const running = request(url, '/v1/slow', { headers: { 'idempotency-key': scope.key }, body });

    await new Promise((resolve) => setTimeout(resolve, IDEMPOTENCY_LOCK_MS + 3_000));
    // What another API process's claim of the same request finds: still held, not taken over.
    expect(await claimIdempotencyKey(pool, scope, hash)).toEqual({ outcome: 'in_flight' });

    release();
    expect((await running).status).toBe(200);
    const after = await claimIdempotencyKey(pool, scope, hash);
    expect(after).toMatchObject({ outcome: 'replay', response: { statusCode: 200, body: '{"done":true}' } });
  }, 30_000);
});
