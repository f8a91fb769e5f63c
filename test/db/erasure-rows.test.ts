// db/erasure.ts eraseDispatchRows, the building block that the API's erasure and retention share
// (docs/http-contract.md "Erasure"): a batch's rows leave in one transaction, a tombstone is left for
// each projected dispatch, a second call removes nothing, and another dispatch's rows stay. Where a
// tracking feed's unmatched checkpoints exist, those naming the dispatch (its tracking number, or its
// id among the references) leave too: shown with a temporary table of that name, which only this
// test's single connection sees. Idempotency records whose stored response names the dispatch leave
// by the ids the database derives from the response (a generated column), whoever wrote it.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { dispatchFootprint, eraseDispatchRows } from '../../db/erasure.js';
import { requestErasures } from '../../db/erasure-records.js';
import { claimSubmission } from '../../db/form-submissions.js';
import { claimIdempotencyKey, completeIdempotencyKey } from '../../db/idempotency-keys.js';
import { createIssuer } from '../../db/issuers.js';
import { createPool, type Pool } from '../../db/pool.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { recordDeliveryAttempt } from '../../db/webhooks.js';
import type { StatusRecord } from '../../domain/dispatch-schemas.js';
import { normaliseTrackingNumber } from '../../domain/tracking-feeds/provider.js';
import { requireTestEnv } from '../support/env.js';
import { createWebhookEvents } from '../support/webhook-events.js';

let pool: Pool;
let issuer: string;

/** A projected dispatch as the workflow's write leaves it, with one carrier event. */
async function projected(trackingNumber: string): Promise<string> {
  const id = randomUUID();
  await pool.query(
    `INSERT INTO dispatches (id, issuer_id, mode, version, status, dispatch_date, postal_code, country_code, tracking_number,
                             tracking_key, registration, window_min, window_max, confidence_level, record)
     VALUES ($1, $2, 'live', 1, 'dispatched', now(), '75011', 'FR', $3, $4, '{}', '2026-11-30', '2026-12-03', 'Low', '{}')`,
    [id, issuer, trackingNumber, normaliseTrackingNumber(trackingNumber)],
  );
  await pool.query(`INSERT INTO carrier_events (dispatch_id, dedupe_key, status, occurred_at) VALUES ($1, 'k1', 'in_transit', now())`, [
    id,
  ]);
  return id;
}

/** An idempotency record of this issuer whose stored response is `body`, stored as the API stores it. */
async function storedResponse(body: string): Promise<string> {
  const scope = { issuerId: issuer, mode: 'live' as const, key: `erase-rows-${randomUUID()}` };
  expect(await claimIdempotencyKey(pool, scope, 'hash')).toEqual({ outcome: 'claimed' });
  await completeIdempotencyKey(pool, scope, 'hash', { statusCode: 201, headers: {}, body });
  return scope.key;
}

beforeAll(async () => {
  // One connection: the temporary table below is seen by every query of this test.
  pool = createPool(requireTestEnv('TEST_DATABASE_URL'), { max: 1, applicationName: 'test-erasure-rows' });
  issuer = (await createIssuer(pool, 'Erasure Rows Issuer')).id;
  await pool.query(
    `CREATE TEMP TABLE feed_unmatched_checkpoints (issuer_id text, mode text, tracking_number text, references_ text[] NOT NULL DEFAULT '{}')`,
  );
});

afterAll(async () => {
  await pool?.end();
});

describe('eraseDispatchRows', () => {
  it('erases a batch in one call, leaves a tombstone each, and leaves other dispatches alone', async () => {
    const [a, b, other] = [await projected('TRK-A1'), await projected('TRK-B1'), await projected('TRK-C1')];
    const { rows } = await eraseDispatchRows(pool, [a, b]);
    expect(rows).toBe(4);
    for (const id of [a, b]) expect(Object.values(await dispatchFootprint(pool, id)).every((n) => n === 0)).toBe(true);
    const tombstones = await pool.query('SELECT dispatch_id, issuer_id, mode, status FROM erasures WHERE dispatch_id = ANY($1) ORDER BY dispatch_id', [[a, b]]); // prettier-ignore
    expect(tombstones.rows).toEqual([a, b].sort().map((id) => ({ dispatch_id: id, issuer_id: issuer, mode: 'live', status: 'completed' })));
    expect(await dispatchFootprint(pool, other)).toMatchObject({ dispatches: 1, carrier_events: 1 });
  });

  it('leaves no attempt behind when a delivery in flight records its attempt after the erasure (delivery_attempts has no foreign key)', async () => {
    const id = await projected('TRK-W1');
    const endpoint = await createWebhookEndpoint(pool, {
      issuerId: issuer,
      url: 'https://hooks.example.com/in-flight',
      events: ['status.updated'],
    });
    if (!endpoint.ok) throw new Error(endpoint.reason);
    const data = { id, status: 'in_transit' } as unknown as StatusRecord;
    const [delivery] = await createWebhookEvents(pool, { dispatchId: id, issuerId: issuer, mode: 'live', events: [{ type: 'status.updated', timestamp: new Date().toISOString(), data }] }); // prettier-ignore
    await eraseDispatchRows(pool, [id]);
    const driving = await recordDeliveryAttempt(pool, { ...delivery, attempt: 1, startedAt: new Date(), durationMs: 40, statusCode: 200, state: 'delivered', driver: `dispatch:${id}` }); // prettier-ignore
    expect(driving).toBe(false);
    const logged = await pool.query('SELECT count(*)::int AS n FROM delivery_attempts WHERE event_id = $1', [delivery.eventId]);
    expect(logged.rows[0].n).toBe(0);
  });

  it('is idempotent: a dispatch already erased counts 0 rows', async () => {
    const id = await projected('TRK-D1');
    expect((await eraseDispatchRows(pool, [id])).rows).toBe(2);
    expect((await eraseDispatchRows(pool, [id])).rows).toBe(0);
    expect((await pool.query('SELECT count(*)::int AS n FROM erasures WHERE dispatch_id = $1', [id])).rows[0].n).toBe(1);
  });

  it("removes the idempotency records whose stored response names the dispatch (a registration's, a batch's), and no other", async () => {
    const [a, b] = [await projected('TRK-F1'), await projected('TRK-F2')];
    const registration = await storedResponse(JSON.stringify({ id: a, status: 'dispatched' }));
    // An id in upper case names the same dispatch (a client's own spelling, echoed).
    const batch = await storedResponse(JSON.stringify({ data: [{ id: b }, { id: a.toUpperCase() }] }));
    const another = await storedResponse(JSON.stringify({ id: b, status: 'dispatched' }));
    const keys = [registration, batch, another];
    expect((await dispatchFootprint(pool, a)).idempotency_keys).toBe(1); // the footprint reads bodies as written: `a` lower case
    await eraseDispatchRows(pool, [a]);
    const left = await pool.query<{ key: string }>('SELECT key FROM idempotency_keys WHERE key = ANY ($1::text[])', [keys]);
    expect(left.rows.map((row) => row.key)).toEqual([another]);
    expect((await dispatchFootprint(pool, a)).idempotency_keys).toBe(0);
  });

  it('derives the ids from the body whoever writes it: every UUID it holds, lower case, and none for an error', async () => {
    const [a, b] = [await projected('TRK-G1'), await projected('TRK-G2')];
    const requestId = randomUUID();
    const batch = await storedResponse(JSON.stringify({ data: [{ id: a }, { id: b.toUpperCase() }], request_id: requestId }));
    const error = await storedResponse('{"error":"bad_request","message":"destination: Required"}');
    // A writer that knows nothing of the column (an API process of the previous release, in a rolling deploy).
    const older = await storedResponse('{}');
    await pool.query('UPDATE idempotency_keys SET body = $2 WHERE key = $1', [older, JSON.stringify({ id: a })]);
    const { rows } = await pool.query<{ key: string; dispatch_ids: string[] }>(
      'SELECT key, dispatch_ids::text[] AS dispatch_ids FROM idempotency_keys WHERE key = ANY ($1::text[])',
      [[batch, error, older]],
    );
    const ids = Object.fromEntries(rows.map((row) => [row.key, [...row.dispatch_ids].sort()]));
    expect(ids[batch]).toEqual([a, b, requestId].sort());
    expect(ids[error]).toEqual([]);
    expect(ids[older]).toEqual([a]);
    await eraseDispatchRows(pool, [b]);
    const left = await pool.query<{ key: string }>('SELECT key FROM idempotency_keys WHERE key = ANY ($1::text[])', [
      [batch, error, older],
    ]);
    expect(left.rows.map((row) => row.key).sort()).toEqual([error, older].sort());
  });

  it("removes what a dashboard form that created a tracking link kept of the dispatch (the page it leads to), and no other form's", async () => {
    const [id, other] = [await projected('TRK-F1'), await projected('TRK-F2')];
    const userId = `du_erasure_${randomUUID()}`;
    const sessionHash = randomBytes(32);
    await pool.query(`INSERT INTO dashboard_users (id, issuer_id, email) VALUES ($1, $2, $3)`, [userId, issuer, `${userId}@example.com`]);
    await pool.query(`INSERT INTO dashboard_sessions (id_hash, user_id, csrf_token) VALUES ($1, $2, 'csrf')`, [sessionHash, userId]);
    // As the dashboard's tracking-link form stores it (dashboard/routes/tracking-page.ts through submit-once.ts); its
    // transaction takes a connection of its own, so a second pool (this file's holds one).
    const forms = createPool(requireTestEnv('TEST_DATABASE_URL'), { max: 2, applicationName: 'test-erasure-rows-forms' });
    try {
      for (const [dispatchId, nonce] of [
        [id, 'erasure-rows-nonce-form-1'],
        [other, 'erasure-rows-nonce-form-2'],
      ] as const) {
        const location = `/dashboard/dispatches/${dispatchId}/tracking-links?created=${nonce}`;
        await claimSubmission(forms, sessionHash, nonce, async () => ({ location, dispatchId, sealed: randomBytes(16) }));
      }
    } finally {
      await forms.end();
    }
    expect((await dispatchFootprint(pool, id)).dashboard_form_submissions).toBe(1);
    await eraseDispatchRows(pool, [id]);
    const naming = async (dispatchId: string) =>
      (await pool.query('SELECT 1 FROM dashboard_form_submissions WHERE strpos(location, $1) > 0', [dispatchId])).rowCount;
    expect(await naming(id)).toBe(0);
    expect(await naming(other)).toBe(1);
    expect((await dispatchFootprint(pool, id)).dashboard_form_submissions).toBe(0);
  });

  it("keeps of its tracking number only a hash, with the issuer and mode, for 30 days (a feed's later checkpoints for it are ignored)", async () => {
    const id = await projected('trk g1');
    await eraseDispatchRows(pool, [id]);
    const { rows } = await pool.query(
      `SELECT mode, number_hash = sha256('TRKG1'::bytea) AS hashed, round(extract(epoch FROM expires_at - now()) / 86400) AS days
         FROM erased_tracking_numbers WHERE issuer_id = $1 AND number_hash = sha256('TRKG1'::bytea)`,
      [issuer],
    );
    expect(rows).toEqual([{ mode: 'live', hashed: true, days: '30' }]);
  });

  it('erases in one batch two dispatches of the issuer with one (recycled) tracking number, and keeps its hash once', async () => {
    // The number's hash was inserted twice by one statement: "ON CONFLICT DO UPDATE command cannot
    // affect row a second time" failed the batch's transaction (retention's, `issuer erase`'s) every time.
    const hashes = async (number: string) =>
      (await pool.query(`SELECT count(*)::int AS n FROM erased_tracking_numbers WHERE issuer_id = $1 AND number_hash = sha256($2::bytea)`, [issuer, number])).rows[0].n; // prettier-ignore
    const [a, b] = [await projected('TRK R1'), await projected('trk r1')];
    expect((await eraseDispatchRows(pool, [a, b])).dispatches).toBe(2);
    expect(await hashes('TRKR1')).toBe(1);
    // Requested first (the API's, `issuer erase`'s), which writes the hash too.
    const [c, d] = [await projected('TRK R2'), await projected('TRK R2')];
    await requestErasures(pool, [c, d]);
    expect(await hashes('TRKR2')).toBe(1);
    expect((await eraseDispatchRows(pool, [c, d])).dispatches).toBe(2);
    expect(await hashes('TRKR2')).toBe(1);
  });

  it("removes a feed's unmatched checkpoints naming the dispatch by tracking number or reference, and no other", async () => {
    const id = await projected('trk e1');
    await pool.query(
      `INSERT INTO feed_unmatched_checkpoints (issuer_id, mode, tracking_number, references_) VALUES
         ($1, 'live', 'TRKE1', '{}'), ($1, 'live', 'OTHER', ARRAY[$2]), ($1, 'live', 'OTHER', '{}'), ($1, 'test', 'TRKE1', '{}')`,
      [issuer, id],
    );
    expect((await dispatchFootprint(pool, id)).feed_unmatched_checkpoints).toBe(2);
    expect((await eraseDispatchRows(pool, [id])).rows).toBe(4);
    const left = await pool.query('SELECT mode, tracking_number, references_ FROM feed_unmatched_checkpoints ORDER BY mode');
    expect(left.rows).toEqual([
      { mode: 'live', tracking_number: 'OTHER', references_: [] },
      { mode: 'test', tracking_number: 'TRKE1', references_: [] },
    ]);
  });
});
