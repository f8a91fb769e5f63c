// Idempotency-Key on POST /v1/dispatches and /batch (docs/http-contract.md "Idempotency-Key"):
// within 24 hours the same key and body replay the first response on any API process (with
// `Idempotent-Replayed: true`) and never create a second dispatch; another body, or the first
// request still running, is a 409 conflict; a malformed key is a 400 naming the header. As Stripe,
// an answer is kept once the registration began (a 409 for an id in use) and not for a request that
// failed validation; unlike Stripe, not a 503 either (the retry it asks for is safe here).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startApi } from '../../api/server.js';
import { claimIdempotencyKey, deleteExpiredIdempotencyKeys } from '../../db/idempotency-keys.js';
import { idempotencyRequestHash } from '../../api/idempotency.js';
import { startHarness, testLogger, type Harness } from '../support/harness.js';
import { UNREACHABLE_CLOSE_MS, unreachableTemporal } from '../support/unreachable-temporal.js';
import { bearer, request, type TestResponse } from './http.js';

let h: Harness;
let other: { baseUrl: string };

const FR = { destination: { postal_code: '75011', country_code: 'FR' } };
const DE = { destination: { postal_code: '10115', country_code: 'DE' } };

/** A fresh issuer with a key, so that its list holds only what the test registered. */
async function freshIssuer(): Promise<{ issuerId: string; key: string }> {
  const issuerId = await h.createIssuer('Idempotency Issuer');
  return { issuerId, key: (await h.createKey(issuerId)).key };
}

const post = (baseUrl: string, path: string, key: string, idempotencyKey: string, body: unknown) =>
  request(baseUrl, path, { headers: { ...bearer(key), 'content-type': 'application/json', 'idempotency-key': idempotencyKey }, body });

async function dispatchCount(key: string): Promise<number> {
  const res = await request(h.baseUrl, '/v1/dispatches?limit=100', { headers: bearer(key) });
  expect(res.status).toBe(200);
  return res.body.data.length;
}

function expectReplayOf(replay: TestResponse, first: TestResponse): void {
  expect(replay.status).toBe(first.status);
  expect(replay.text).toBe(first.text);
  expect(replay.headers['idempotent-replayed']).toBe('true');
}

beforeAll(async () => {
  h = await startHarness();
  other = await h.startExtraApi();
});

afterAll(async () => {
  await h?.stop();
});

describe('Idempotency-Key on POST /v1/dispatches', () => {
  it('replays the first response on another API process and creates one dispatch for a retried POST without id', async () => {
    const { key } = await freshIssuer();
    const first = await post(h.baseUrl, '/v1/dispatches', key, 'order-1', FR);
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();

    const retry = await post(other.baseUrl, '/v1/dispatches', key, 'order-1', FR);
    expectReplayOf(retry, first);
    expect(retry.headers.location).toBe(first.headers.location);
    expect(await dispatchCount(key)).toBe(1);
  });

  it('compares the canonical body: the same fields in another order and spacing are the same request', async () => {
    const { key } = await freshIssuer();
    const first = await post(h.baseUrl, '/v1/dispatches', key, 'order-2', {
      destination: { postal_code: '75011', country_code: 'FR' },
      reference: 'r-1',
    });
    const reordered = await post(h.baseUrl, '/v1/dispatches', key, 'order-2', '{ "reference": "r-1", "destination": { "country_code": "FR", "postal_code": "75011" } }'); // prettier-ignore
    expectReplayOf(reordered, first);
  });

  it('answers 409 conflict naming the header when the same key comes with a different body', async () => {
    const { key } = await freshIssuer();
    expect((await post(h.baseUrl, '/v1/dispatches', key, 'order-3', FR)).status).toBe(201);
    const res = await post(other.baseUrl, '/v1/dispatches', key, 'order-3', DE);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'conflict', message: expect.stringMatching(/^Idempotency-Key: .*different request/) });
    expect(await dispatchCount(key)).toBe(1);
  });

  it('answers 409 conflict, and registers nothing, while a request with the same key is still in flight', async () => {
    const { issuerId, key } = await freshIssuer();
    // The first request holds the key (claimed by another process, not yet answered).
    const claim = await claimIdempotencyKey(h.pool, { issuerId, mode: 'live', key: 'order-4' }, idempotencyRequestHash('POST', '/v1/dispatches', FR)); // prettier-ignore
    expect(claim.outcome).toBe('claimed');
    const res = await post(h.baseUrl, '/v1/dispatches', key, 'order-4', FR);
    expect(res.status).toBe(409);
    expect(res.body.message).toMatch(/^Idempotency-Key: .*still in progress; retry later/);
    expect(res.headers['retry-after']).toBe('10'); // the claim's lease: a dead process's key is free by then
    expect(await dispatchCount(key)).toBe(0);
  });

  it('registers the same id, not a second dispatch, when a retry takes over a key whose first request died before answering', async () => {
    const { issuerId, key } = await freshIssuer();
    const first = await post(h.baseUrl, '/v1/dispatches', key, 'order-5', FR);
    expect(first.status).toBe(201);
    // As if the process had died after registering but before storing its answer, past the lease.
    await h.pool.query(
      `UPDATE idempotency_keys SET status_code = NULL, headers = NULL, body = NULL, locked_at = now() - interval '1 hour'
        WHERE issuer_id = $1 AND key = 'order-5'`,
      [issuerId],
    );
    const retry = await post(other.baseUrl, '/v1/dispatches', key, 'order-5', FR);
    expect(retry.status).toBe(200);
    expect(retry.body.id).toBe(first.body.id);
    expect(await dispatchCount(key)).toBe(1);
  });

  it('keys belong to the issuer: another issuer sending the same key registers its own dispatch', async () => {
    const a = await freshIssuer();
    const b = await freshIssuer();
    const first = await post(h.baseUrl, '/v1/dispatches', a.key, 'shared-key', FR);
    const second = await post(h.baseUrl, '/v1/dispatches', b.key, 'shared-key', FR);
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(second.body.id).not.toBe(first.body.id);
  });

  it('does not keep a 400 validation failure: the same key then runs the corrected request', async () => {
    const { key } = await freshIssuer();
    const invalid = { destination: { postal_code: '75011', country_code: 'XX' } };
    const first = await post(h.baseUrl, '/v1/dispatches', key, 'order-6', invalid);
    expect(first.status).toBe(400);
    expect(first.body.message).toMatch(/^destination\.country_code: /);
    const again = await post(other.baseUrl, '/v1/dispatches', key, 'order-6', invalid);
    expect(again.status).toBe(400);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    const corrected = await post(h.baseUrl, '/v1/dispatches', key, 'order-6', FR);
    expect(corrected.status).toBe(201);
    expect(await dispatchCount(key)).toBe(1);
  });

  it("does not keep a new dispatch's 400 for a dispatch_date out of bounds (checked once the id is looked up): the same key then runs the corrected request", async () => {
    const { key } = await freshIssuer();
    const ahead = { ...FR, dispatch_date: new Date(Date.now() + 3 * 86_400_000).toISOString() };
    const first = await post(h.baseUrl, '/v1/dispatches', key, 'order-bounds', ahead);
    expect([first.status, first.body.message]).toEqual([400, expect.stringMatching(/^dispatch_date: /)]);
    expect((await post(h.baseUrl, '/v1/dispatches', key, 'order-bounds', FR)).status).toBe(201);
  });

  it('keeps a 409 answered once the registration ran (an id registered with another body) and replays it', async () => {
    const { key } = await freshIssuer();
    const id = randomUUID();
    expect((await request(h.baseUrl, '/v1/dispatches', { headers: bearer(key), body: { id, ...FR } })).status).toBe(201);
    const first = await post(h.baseUrl, '/v1/dispatches', key, 'order-9', { id, ...DE });
    expect(first.status).toBe(409);
    expect(first.body.message).not.toMatch(/Idempotency-Key/);
    expectReplayOf(await post(other.baseUrl, '/v1/dispatches', key, 'order-9', { id, ...DE }), first);
  });

  it(
    'does not keep a 503 (Temporal unreachable): the same key sent again once it is back registers one dispatch',
    async () => {
      const { key } = await freshIssuer();
      const unreachable = unreachableTemporal(h.config.TEMPORAL_NAMESPACE);
      const cut = await startApi({
        config: h.config,
        pool: h.pool,
        temporal: unreachable.temporal,
        logger: testLogger('api-no-temporal'),
        port: 0,
        host: '127.0.0.1',
      });
      try {
        const first = await post(cut.url, '/v1/dispatches', key, 'order-10', FR);
        expect(first.status).toBe(503);
        expect(first.body.error).toBe('service_unavailable');
      } finally {
        await cut.close();
        await unreachable.close();
      }
      const retry = await post(h.baseUrl, '/v1/dispatches', key, 'order-10', FR);
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(await dispatchCount(key)).toBe(1);
    },
    30_000 + UNREACHABLE_CLOSE_MS,
  );

  it('forgets a key after 24 hours: the same key then runs a new request', async () => {
    const { issuerId, key } = await freshIssuer();
    expect((await post(h.baseUrl, '/v1/dispatches', key, 'order-7', FR)).status).toBe(201);
    await h.pool.query(`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE issuer_id = $1`, [issuerId]);
    const later = await post(h.baseUrl, '/v1/dispatches', key, 'order-7', DE);
    expect(later.status).toBe(201);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    expect(await dispatchCount(key)).toBe(2);
  });

  it('deletes keys older than 24 hours', async () => {
    const { issuerId, key } = await freshIssuer();
    expect((await post(h.baseUrl, '/v1/dispatches', key, 'order-8', FR)).status).toBe(201);
    await h.pool.query(`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE issuer_id = $1`, [issuerId]);
    expect(await deleteExpiredIdempotencyKeys(h.pool)).toBeGreaterThanOrEqual(1);
    const { rows } = await h.pool.query('SELECT 1 FROM idempotency_keys WHERE issuer_id = $1', [issuerId]);
    expect(rows).toEqual([]);
  });

  it.each([
    ['256 characters', 'k'.repeat(256)],
    ['empty', ''],
    ['a tab', 'a\tb'],
    ['a non-ASCII character', 'caf\u00e9'],
  ])('answers 400 naming Idempotency-Key for a key that is %s', async (_label, idempotencyKey) => {
    const { key } = await freshIssuer();
    const res = await post(h.baseUrl, '/v1/dispatches', key, idempotencyKey, FR);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'bad_request', message: expect.stringMatching(/^Idempotency-Key: /) });
    expect(await dispatchCount(key)).toBe(0);
  });

  it('answers 400 naming Idempotency-Key when the header is sent twice, not one key "a, b"', async () => {
    const { key } = await freshIssuer();
    const headers = { ...bearer(key), 'idempotency-key': ['retry-1', 'retry-2'] };
    const res = await request(h.baseUrl, '/v1/dispatches', { headers, body: FR });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'bad_request', message: expect.stringMatching(/^Idempotency-Key: .*once/) });
    expect(await dispatchCount(key)).toBe(0);
  });

  it('takes a key of 255 printable ASCII characters', async () => {
    const { key } = await freshIssuer();
    const res = await post(h.baseUrl, '/v1/dispatches', key, `${'~ '.repeat(127)}!`, FR);
    expect(res.status).toBe(201);
  });
});

describe('Idempotency-Key on POST /v1/dispatches/batch', () => {
  it('replays the first batch response on another API process and registers its items without id once', async () => {
    const { key } = await freshIssuer();
    const body = { dispatches: [FR, DE] };
    const first = await post(h.baseUrl, '/v1/dispatches/batch', key, 'batch-1', body);
    expect(first.status).toBe(200);
    expect(first.body.results.map((r: { result: string }) => r.result)).toEqual(['created', 'created']);

    expectReplayOf(await post(other.baseUrl, '/v1/dispatches/batch', key, 'batch-1', body), first);
    expect(await dispatchCount(key)).toBe(2);
  });

  it('answers 409 conflict when the key was used for a single registration', async () => {
    const { key } = await freshIssuer();
    expect((await post(h.baseUrl, '/v1/dispatches', key, 'used-once', FR)).status).toBe(201);
    const res = await post(h.baseUrl, '/v1/dispatches/batch', key, 'used-once', { dispatches: [FR] });
    expect(res.status).toBe(409);
    expect(res.body.message).toMatch(/^Idempotency-Key: /);
    expect(await dispatchCount(key)).toBe(1);
  });
});
