// `npm run admin -- retention run` with windows of seconds (docs/privacy.md "What is kept, and for
// how long"): the settled webhook event's payload is cleared (the delivery log still reads, a replay
// is refused with 409 saying the payload expired), old transit history and long-expired tracking
// links are deleted, and an open dispatch and an unsettled delivery are left alone. The service runs
// on a database of its own (test/support/retention-service.ts), its worker in its own process.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { listAttempts } from '../../db/delivery-log.js';
import { newId } from '../../db/ids.js';
import { dispatchFootprint } from '../../db/erasure.js';
import { countDispatchRuns } from '../../temporal/erasure.js';
import { createWebhookEndpoint } from '../../db/webhook-endpoints.js';
import { bearer, registrationFor, request } from '../api/http.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startRetentionService, type RetentionService } from '../support/retention-service.js';
import { until } from '../support/until.js';

const PAYLOAD_WINDOW_MS = 3_000;
let s: RetentionService;
let settled: Receiver;
let failing: Receiver;
let key: string;
let issuerId: string;
let settledEndpoint: string;
let failingEndpoint: string;
let feedId: string;

beforeAll(async () => {
  s = await startRetentionService('retention_run', {
    RETENTION_DISPATCH: '3s',
    // A delivered card's workflow completes 1 s after its last carrier event.
    DELIVERED_RETENTION: '1s',
    RETENTION_WEBHOOK_PAYLOAD: '3s',
    RETENTION_TRANSIT_HISTORY: '30d',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    // A failed attempt waits an hour for its retry: its delivery stays pending through the test.
    WEBHOOK_RETRY_SCHEDULE: '1h',
  });
  await s.startWorker();
  settled = await startReceiver();
  failing = await startReceiver({ respond: () => 500 });
  issuerId = await s.h.createIssuer();
  key = (await s.h.createKey(issuerId)).key;
  const a = await createWebhookEndpoint(s.h.pool, { issuerId, url: settled.url, events: ['delivery.predicted'] });
  const b = await createWebhookEndpoint(s.h.pool, { issuerId, url: failing.url, events: ['status.updated'] });
  if (!a.ok || !b.ok) throw new Error('endpoints not created');
  settledEndpoint = a.endpoint.id;
  failingEndpoint = b.endpoint.id;
}, 120_000);

afterAll(async () => {
  await settled?.close();
  await failing?.close();
  await s?.stop();
});

async function eventOf(dispatchId: string, type: string): Promise<{ id: string; body: Buffer; payload_expired_at: Date | null }> {
  return until(async () => {
    const { rows } = await s.h.pool.query(
      'SELECT id, body, payload_expired_at FROM webhook_events WHERE dispatch_id = $1 AND type = $2 ORDER BY created_at LIMIT 1',
      [dispatchId, type],
    );
    return rows[0];
  }, `the ${type} event of ${dispatchId}`);
}

describe('retention run with windows of seconds', () => {
  const dispatchId = randomUUID();
  const completedId = randomUUID();
  let quietKey: string;
  let predicted: string;
  let pending: string;
  let result: Record<string, number>;

  beforeAll(async () => {
    const res = await request(s.h.baseUrl, '/v1/dispatches', { method: 'POST', headers: bearer(key), body: registrationFor(dispatchId) });
    expect(res.status).toBe(201);
    const event = await request(s.h.baseUrl, `/v1/dispatches/${dispatchId}/events`, {
      method: 'POST',
      headers: bearer(key),
      body: { status: 'in_transit', occurred_at: new Date().toISOString(), event_id: 'scan-1' },
    });
    expect(event.status).toBe(202);
    predicted = (await eventOf(dispatchId, 'delivery.predicted')).id;
    pending = (await eventOf(dispatchId, 'status.updated')).id;
    // delivery.predicted delivered to the first endpoint; status.updated failed once at the second, its retry an hour away.
    await until(async () => {
      const { rows } = await s.h.pool.query(
        `SELECT state, attempts FROM webhook_deliveries WHERE event_id = ANY ($1::text[]) ORDER BY event_id`,
        [[predicted, pending]],
      );
      return rows.some((r) => r.state === 'delivered') && rows.some((r) => r.state === 'pending' && r.attempts === 1);
    }, 'one delivery settled and one waiting for its retry');
    // History: one row past the 30-day window, one inside it. Links: one expired 31 days ago, one 29.
    const day = 86_400_000;
    for (const [postal, deliveredDaysAgo] of [
      ['RT-OLD', 40],
      ['RT-NEW', 10],
    ] as const) {
      const delivered = new Date(Date.now() - deliveredDaysAgo * day).toISOString().slice(0, 10);
      await s.h.pool.query(
        `INSERT INTO transit_history (postal_code, country_code, postal_prefix, dispatch_date, delivered_date, business_days, source)
         VALUES ($1, 'FR', 'RT', $2::date - 3, $2::date, 3, 'import')`,
        [postal, delivered],
      );
    }
    for (const [id, expiredDaysAgo] of [
      ['tl_retention_old', 31],
      ['tl_retention_new', 29],
    ] as const) {
      await s.h.pool.query(
        `INSERT INTO tracking_links (id, dispatch_id, issuer_id, mode, token_hash, expires_at) VALUES ($1, $2, $3, 'live', $4, $5)`,
        [id, dispatchId, issuerId, randomBytes(32), new Date(Date.now() - expiredDaysAgo * day)],
      );
    }
    // The token hashes of an erased dispatch's links: one expired 31 days ago, one 29.
    for (const [hash, expiredDaysAgo] of [
      ['e0', 31],
      ['e1', 29],
    ] as const) {
      await s.h.pool.query(`INSERT INTO erased_tracking_links (token_hash, expires_at) VALUES (decode($1, 'hex'), $2)`, [
        hash,
        new Date(Date.now() - expiredDaysAgo * day),
      ]);
    }
    // The tracking numbers of erased dispatches (their hashes): one kept past its 30 days, one not yet.
    for (const [hash, expiresInDays] of [
      ['e2', -1],
      ['e3', 1],
    ] as const) {
      await s.h.pool.query(
        `INSERT INTO erased_tracking_numbers (issuer_id, mode, number_hash, expires_at) VALUES ($1, 'live', decode($2, 'hex'), $3)`,
        [issuerId, hash, new Date(Date.now() + expiresInDays * day)],
      );
    }
    // A tracking feed's unmatched checkpoints: one received 31 days ago (past the 30 days they are kept), one 29.
    const feed = await request(s.h.baseUrl, '/v1/tracking_feeds', { method: 'POST', headers: bearer(key), body: { provider: 'shippo' } });
    expect(feed.status).toBe(201);
    for (const [eventId, receivedDaysAgo] of [
      ['unmatched-old', 31],
      ['unmatched-new', 29],
    ] as const) {
      await s.h.pool.query(
        `INSERT INTO feed_unmatched_checkpoints (feed_id, issuer_id, mode, tracking_number, event_id, status, time, original, received_at)
         VALUES ($1, $2, 'live', 'RT0001', $3, 'in_transit', '{}', '{}', $4)`,
        [feed.body.id, issuerId, eventId, new Date(Date.now() - receivedDaysAgo * day)],
      );
    }
    // Its ignored checkpoints, likewise: one received 31 days ago, one 29.
    for (const [eventId, receivedDaysAgo] of [
      ['ignored-old', 31],
      ['ignored-new', 29],
    ] as const) {
      await s.h.pool.query(
        `INSERT INTO feed_ignored_checkpoints (feed_id, issuer_id, mode, tracking_number, event_id, status, reason, message, received_at)
         VALUES ($1, $2, 'live', 'RT0001', $3, 'pending', 'no_status_mapping', 'says nothing', $4)`,
        [feed.body.id, issuerId, eventId, new Date(Date.now() - receivedDaysAgo * day)],
      );
    }
    // The feed's hourly counts: one 49 hours old (past the two days they are kept), one of 23 hours ago (read in its counts).
    for (const [hoursAgo, received] of [
      [49, 7],
      [23, 5],
    ] as const) {
      await s.h.pool.query(
        `INSERT INTO tracking_feed_counts (feed_id, hour, received) VALUES ($1, date_trunc('hour', now()) - make_interval(hours => $2), $3)`,
        [feed.body.id, hoursAgo, received],
      );
    }
    feedId = feed.body.id;
    // A completed dispatch, of an issuer without endpoints (no delivery keeps its workflow open): delivered, its run ended.
    quietKey = (await s.h.createKey(await s.h.createIssuer('Quiet Issuer'))).key;
    expect(
      (await request(s.h.baseUrl, '/v1/dispatches', { method: 'POST', headers: bearer(quietKey), body: registrationFor(completedId) }))
        .status,
    ).toBe(201);
    const delivered = await request(s.h.baseUrl, `/v1/dispatches/${completedId}/events`, {
      method: 'POST',
      headers: bearer(quietKey),
      body: { status: 'delivered', occurred_at: new Date().toISOString(), event_id: 'done-1', location: 'RETENTION TEST DEPOT' },
    });
    expect(delivered.status).toBe(202);
    await until(
      async () => (await s.h.temporal.workflow.getHandle(completedId).describe()).status.name === 'COMPLETED',
      'the completed run',
    );
    await new Promise((resolve) => setTimeout(resolve, PAYLOAD_WINDOW_MS + 500));
    const run = await s.cli(['retention', 'run', '--batch-size', '1']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    result = JSON.parse(run.stdout);
  }, 120_000);

  it('prints the four counts as one JSON document', () => {
    // deleted_links: the link expired 31 days ago, the token hash of an erased dispatch's link as old,
    // and the hash of an erased dispatch's tracking number kept past its 30 days.
    expect(result).toEqual({ erased_dispatches: 1, cleared_payloads: expect.any(Number), deleted_history_rows: 1, deleted_links: 3 });
    expect(result.cleared_payloads).toBeGreaterThanOrEqual(1);
  });

  it('erases a completed dispatch past its window: nothing names it in any table, and Temporal has no run of it', async () => {
    const footprint = await dispatchFootprint(s.h.pool, completedId);
    expect(Object.values(footprint).every((n) => n === 0)).toBe(true);
    expect(await countDispatchRuns(s.h.temporal, completedId)).toBe(0);
    const status = await request(s.h.baseUrl, `/v1/status/${completedId}`, { headers: bearer(quietKey) });
    expect(status.status).toBe(404);
    expect(status.body.message).toMatch(/erased/);
  });

  it('clears the body of a settled webhook event and its attempts’ headers, response and error text', async () => {
    const event = await eventOf(dispatchId, 'delivery.predicted');
    expect(event.body.length).toBe(0);
    expect(event.payload_expired_at).toBeInstanceOf(Date);
    const { rows } = await s.h.pool.query('SELECT request_headers, response_head FROM delivery_attempts WHERE event_id = $1', [predicted]);
    expect(rows).toEqual([{ request_headers: null, response_head: null }]);
  });

  it('leaves the delivery log readable: ids, type, time, status code and outcome stay', async () => {
    const { attempts } = await listAttempts(s.h.pool, settledEndpoint, { limit: 10 });
    expect(attempts.find((a) => a.eventId === predicted)).toMatchObject({
      statusCode: 200,
      result: 'delivered',
      error: null,
      eventType: 'delivery.predicted',
    });
    const list = await s.cli(['deliveries', 'list', '--endpoint', settledEndpoint]);
    expect(JSON.parse(list.stdout).data).toContainEqual(
      expect.objectContaining({
        event_id: predicted,
        endpoint_id: settledEndpoint,
        event: 'delivery.predicted',
        state: 'delivered',
        attempts: 1,
      }),
    );
    const read = await request(s.h.baseUrl, `/v1/events/${predicted}`, { headers: bearer(key) });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: predicted, type: 'delivery.predicted' });
  });

  it('refuses a replay of the cleared event over the API with 409 saying the payload expired', async () => {
    const res = await request(s.h.baseUrl, `/v1/webhook_endpoints/${settledEndpoint}/replay`, {
      method: 'POST',
      headers: bearer(key),
      body: { event_ids: [predicted] },
    });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      error: 'conflict',
      message: expect.stringMatching(new RegExp(`payload of webhook event ${predicted} expired`)),
    });
  });

  it('refuses `deliveries replay --event-id` of the cleared event, saying the payload expired', async () => {
    const replay = await s.cli(['deliveries', 'replay', '--event-id', predicted]);
    expect(replay.code).not.toBe(0);
    expect(replay.stdout).toBe('');
    expect(replay.stderr).toMatch(/payload of webhook event .* expired/);
  });

  it('leaves the body of an event whose delivery is still pending', async () => {
    const event = await eventOf(dispatchId, 'status.updated');
    expect(event.payload_expired_at).toBeNull();
    const delivery = await s.h.pool.query('SELECT state FROM webhook_deliveries WHERE event_id = $1 AND endpoint_id = $2', [
      pending,
      failingEndpoint,
    ]);
    expect(delivery.rows).toEqual([{ state: 'pending' }]);
    expect(JSON.parse(event.body.toString('utf8'))).toMatchObject({ event: 'status.updated' });
  });

  it('leaves an open dispatch alone', async () => {
    const res = await request(s.h.baseUrl, `/v1/status/${dispatchId}`, { headers: bearer(key) });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: dispatchId, status: 'in_transit' });
  });

  it("deletes transit history past its window, tracking links (and erased links' token hashes) expired 30 days ago and erased tracking numbers past their 30 days, and only those", async () => {
    const history = await s.h.pool.query(`SELECT postal_code FROM transit_history WHERE postal_prefix = 'RT' ORDER BY postal_code`);
    expect(history.rows).toEqual([{ postal_code: 'RT-NEW' }]);
    const links = await s.h.pool.query(`SELECT id FROM tracking_links WHERE dispatch_id = $1 ORDER BY id`, [dispatchId]);
    expect(links.rows).toEqual([{ id: 'tl_retention_new' }]);
    const erased = await s.h.pool.query(
      `SELECT encode(token_hash, 'hex') AS hash FROM erased_tracking_links WHERE token_hash IN ('\\xe0', '\\xe1')`,
    );
    expect(erased.rows).toEqual([{ hash: 'e1' }]);
    const numbers = await s.h.pool.query(
      `SELECT encode(number_hash, 'hex') AS hash FROM erased_tracking_numbers WHERE number_hash IN ('\\xe2', '\\xe3')`,
    );
    expect(numbers.rows).toEqual([{ hash: 'e3' }]);
  });

  it("deletes a tracking feed's unmatched checkpoints kept past their 30 days, and only those", async () => {
    const kept = await s.h.pool.query(`SELECT event_id FROM feed_unmatched_checkpoints WHERE tracking_number = 'RT0001'`);
    expect(kept.rows).toEqual([{ event_id: 'unmatched-new' }]);
  });

  it("deletes a tracking feed's ignored checkpoints kept past their 30 days, and only those", async () => {
    const kept = await s.h.pool.query(`SELECT event_id FROM feed_ignored_checkpoints WHERE tracking_number = 'RT0001'`);
    expect(kept.rows).toEqual([{ event_id: 'ignored-new' }]);
  });

  it("deletes a tracking feed's hourly counts past two days, and keeps those of the last 24 hours, which its counts read", async () => {
    const rows = await s.h.pool.query(`SELECT received FROM tracking_feed_counts WHERE feed_id = $1`, [feedId]);
    expect(rows.rows).toEqual([{ received: 5 }]);
    const read = await request(s.h.baseUrl, `/v1/tracking_feeds/${feedId}`, { headers: bearer(key) });
    expect(read.body.counts).toMatchObject({ received: 5 });
  });

  it('logs each batch with its kind and counts, and nothing of the dispatch', () => {
    const output = s.worker()!.output();
    expect(output).toMatch(/retention batch.*webhook_payload|webhook_payload.*retention batch/);
    expect(output).toContain('retention sweep done');
  });
});

describe('an erasure requested whose workflow never started (the API process died, or Temporal was down, between the two), and one that failed', () => {
  const stalledId = randomUUID();
  const failedId = randomUUID();
  let erasureId: string;
  let failedErasureId: string;

  beforeAll(async () => {
    const res = await request(s.h.baseUrl, '/v1/dispatches', { method: 'POST', headers: bearer(key), body: registrationFor(stalledId) });
    expect(res.status).toBe(201);
    // Its status.updated fails at the second endpoint: the run stays open, a delivery pending.
    const event = await request(s.h.baseUrl, `/v1/dispatches/${stalledId}/events`, {
      method: 'POST',
      headers: bearer(key),
      body: { status: 'in_transit', occurred_at: new Date().toISOString(), event_id: 'stalled-1' },
    });
    expect(event.status).toBe(202);
    await eventOf(stalledId, 'status.updated');
    // What ingest/erasure.ts eraseDispatch leaves when it records the erasure and goes no further: a
    // pending row, requested a while ago, with no workflow. The client got no 202 and never asked again.
    erasureId = newId('er');
    await s.h.pool.query(
      `INSERT INTO erasures (id, dispatch_id, issuer_id, mode, requested_at) VALUES ($1, $2, $3, 'live', now() - interval '2 minutes')`,
      [erasureId, stalledId, issuerId],
    );
    // What an erasure whose workflow ran out of retries leaves (Postgres or Temporal down for longer
    // than its activities' retries, about six minutes): the row says failed, the dispatch is all there.
    const registered = await request(s.h.baseUrl, '/v1/dispatches', {
      method: 'POST',
      headers: bearer(key),
      body: registrationFor(failedId),
    });
    expect(registered.status).toBe(201);
    failedErasureId = newId('er');
    await s.h.pool.query(
      `INSERT INTO erasures (id, dispatch_id, issuer_id, mode, status, requested_at) VALUES ($1, $2, $3, 'live', 'failed', now() - interval '1 hour')`,
      [failedErasureId, failedId, issuerId],
    );
    const run = await s.cli(['retention', 'run']);
    expect(run.code).toBe(0);
  }, 120_000);

  /** The erasure completes, having removed a run at least: nothing names the dispatch, Temporal has no run of it. */
  async function expectCompleted(erasure: string, dispatchId: string): Promise<void> {
    const done = await until(async () => {
      const res = await request(s.h.baseUrl, `/v1/erasures/${erasure}`, { headers: bearer(key) });
      return res.body?.status === 'completed' ? res : undefined;
    }, `erasure ${erasure} completed`);
    expect(done.body.removed.workflow_runs).toBeGreaterThanOrEqual(1);
    const footprint = await dispatchFootprint(s.h.pool, dispatchId);
    expect(Object.values(footprint).every((n) => n === 0)).toBe(true);
    expect(await countDispatchRuns(s.h.temporal, dispatchId)).toBe(0);
  }

  it('is started by the retention sweep and completes: nothing names the dispatch, Temporal has no run of it', async () => {
    await expectCompleted(erasureId, stalledId);
  }, 90_000);

  it('logs that it started it, by erasure id', () => {
    expect(s.worker()!.output()).toContain(erasureId);
  });

  it('starts a failed erasure again, which completes: nobody has to ask a second time within the day', async () => {
    await expectCompleted(failedErasureId, failedId);
  }, 90_000);
});
