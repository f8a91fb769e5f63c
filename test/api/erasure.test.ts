// Erasure on request (docs/http-contract.md "Erasure"): DELETE
// /v1/dispatches/{id} answers as the status endpoint does for 400/401/403/404, then 202 with the
// erasure, the same one when asked again; GET /v1/erasures/{id} for the issuer that asked only. A
// dispatch with a long life (carrier events, webhook deliveries with retries, a tracking link with its
// gate rows, an idempotency record, a replay, continue-as-new and a restart after a rest in exception)
// leaves nothing behind: `dispatch footprint` counts 0 in every table and in Temporal, its transit
// history row stays without the link, another dispatch of the issuer is untouched, and the tombstone
// answers 404 (status, events, links) and 409 (registration) saying it was erased.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { dispatchFootprint } from '../../db/erasure.js';
import { requestErasures } from '../../db/erasure-records.js';
import { claimSubmission } from '../../db/form-submissions.js';
import { loadRegistrationOutcomes } from '../../db/predictions.js';
import { parseRegistration } from '../../api/registration.js';
import type { ApiKey } from '../../api/key-cache.js';
import { replayDeliveries } from '../../ingest/webhook-replays.js';
import { dispatchWorkflowOptions, registerDispatch } from '../../temporal/client.js';
import { countDispatchRuns } from '../../temporal/erasure.js';
import { runCli } from '../support/cli.js';
import { startHarness, type Harness } from '../support/harness.js';
import { scrape, valueOf } from '../support/prometheus.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { createFeed, easyPostBody, postInbound } from '../support/tracking-feeds.js';
import { until } from '../support/until.js';
import { bearer, registrationFor, request, type TestResponse } from './http.js';

let h: Harness;
let receiver: Receiver;
let issuer: string;
let key: string;
let keyId: string;
let testKey: string;
let otherKey: string;
let readOnlyKey: string;

const DAY = 86_400_000;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY).toISOString();
const DISPATCH_DATE = daysAgo(20);
const call = (method: string, path: string, body?: unknown, withKey = key) =>
  request(h.baseUrl, path, { method, headers: bearer(withKey), body });
const erase = (id: string, withKey = key) => call('DELETE', `/v1/dispatches/${id}`, undefined, withKey);
const postEvent = (id: string, body: unknown) => call('POST', `/v1/dispatches/${id}/events`, body);
const statusOf = async (id: string) => (await call('GET', `/v1/status/${id}`)).body?.status;

async function registered(withKey = key): Promise<string> {
  const id = randomUUID();
  const res = await call('POST', '/v1/dispatches', registrationFor(id, { dispatch_date: DISPATCH_DATE }), withKey);
  expect(res.status).toBe(201);
  return id;
}

/**
 * Temporal deletes a run asynchronously, and the erasure waits until its store no longer holds one
 * (temporal/erasure.ts): a dispatch with three runs took 57 s of that on a loaded machine (four test
 * files at once), so the wait allows more than `until`'s minute.
 */
const ERASURE_WAIT_MS = 150_000;

async function completed(erasureId: string, withKey = key): Promise<TestResponse> {
  return until(
    async () => {
      const res = await call('GET', `/v1/erasures/${erasureId}`, undefined, withKey);
      return res.body?.status === 'completed' ? res : undefined;
    },
    `erasure ${erasureId} completed`,
    ERASURE_WAIT_MS,
  );
}

beforeAll(async () => {
  // Failing first attempts are retried within seconds; a card resting in exception completes after 2 s;
  // the erasure waits WEBHOOK_TIMEOUT_MS + 5 s for activities in flight.
  h = await startHarness({
    env: {
      EXCEPTION_RETENTION: '2s',
      DELIVERED_RETENTION: '1h',
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    },
  });
  issuer = await h.createIssuer('Erasure Issuer');
  ({ key, id: keyId } = await h.createKey(issuer));
  testKey = (await h.createKey(issuer, { mode: 'test' })).key;
  readOnlyKey = (await h.createKey(issuer, { scopes: ['status:read'] })).key;
  otherKey = (await h.createKey(await h.createIssuer('Other Issuer'))).key;
  // The first two webhook attempts fail: the deliveries retry.
  receiver = await startReceiver({ respond: (n) => (n <= 2 ? 500 : 200) });
  expect((await call('POST', '/v1/webhook_endpoints', { url: receiver.url, events: ['status.updated'] })).status).toBe(201);
}, 60_000);

afterAll(async () => {
  await receiver?.close();
  await h?.stop();
});

describe('DELETE /v1/dispatches/{id}: the answers of the status endpoint', () => {
  let id: string;
  beforeAll(async () => {
    id = await registered();
  });

  it('returns 400 when the id is not a UUID v4', async () => {
    const res = await erase('not-a-uuid');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'bad_request', message: expect.stringContaining('id:') });
  });

  it('returns 401 without an API key', async () => {
    const res = await request(h.baseUrl, `/v1/dispatches/${id}`, { method: 'DELETE' });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('unauthorized');
  });

  it('returns 403 to a key without the dispatches:write scope', async () => {
    const res = await erase(id, readOnlyKey);
    expect(res.status).toBe(403);
    expect(res.body.message).toContain('dispatches:write');
  });

  it("returns 403 for another issuer's dispatch", async () => {
    expect((await erase(id, otherKey)).status).toBe(403);
  });

  it('returns 404 for an unknown dispatch and to a key of the other mode', async () => {
    expect((await erase(randomUUID())).status).toBe(404);
    expect((await erase(id, testKey)).status).toBe(404);
    expect(await statusOf(id)).toBe('dispatched');
  });

  it('erases a test dispatch with a test key: 202 with the erasure, and the same erasure when asked again', async () => {
    const testId = await registered(testKey);
    const first = await erase(testId, testKey);
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ id: expect.stringMatching(/^er_[0-9A-Za-z]{16}$/), dispatch_id: testId, status: 'pending', requested_at: expect.any(String) }); // prettier-ignore
    const again = await erase(testId, testKey);
    expect(again.status).toBe(202);
    expect(again.body.id).toBe(first.body.id);
    expect((await call('GET', `/v1/erasures/${first.body.id}`, undefined, key)).status).toBe(404);
    expect((await call('GET', `/v1/erasures/${first.body.id}`, undefined, otherKey)).status).toBe(404);
    const done = await completed(first.body.id, testKey);
    expect(Object.keys(done.body).sort()).toEqual(['completed_at', 'dispatch_id', 'id', 'removed', 'requested_at', 'status']);
    expect(done.body.removed.workflow_runs).toBe(1);
  });

  it('returns 400 for a malformed erasure id', async () => {
    const res = await call('GET', '/v1/erasures/er_short');
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('erasure_id');
  });
});

describe('while an erasure is pending (its runs removed, its rows not yet)', () => {
  const registration = { tracking_number: 'PENDING-ERASE-1', dispatch_date: DISPATCH_DATE, destination: { country_code: 'FR', postal_code: '75011' } }; // prettier-ignore
  const withKey = (idempotencyKey: string, body: unknown, path = '/v1/dispatches') =>
    request(h.baseUrl, path, { method: 'POST', headers: { ...bearer(key), 'idempotency-key': idempotencyKey }, body });
  const idempotencyKey = `pending-erase-${randomUUID()}`;
  let id: string;
  let erasureId: string;

  beforeAll(async () => {
    const first = await withKey(idempotencyKey, registration);
    expect(first.status).toBe(201);
    id = first.body.id;
    const erasure = await erase(id);
    expect(erasure.body.status).toBe('pending');
    erasureId = erasure.body.id;
  });

  it('answers a registration retried with its Idempotency-Key with 409 saying it was erased, not with the erased record', async () => {
    // Found by Schemathesis's stateful phase (ST302): the replay handed out the record, with its
    // postal code, of a dispatch whose every other answer was already 404 "erased".
    const retried = await withKey(idempotencyKey, registration);
    expect(retried.status).toBe(409);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(retried.body).toEqual({ error: 'conflict', message: expect.stringContaining(`dispatch id ${id} was erased on`) });
    expect((await call('GET', `/v1/erasures/${erasureId}`)).body.status).toBe('pending');
  });

  it("answers another issuer's or the other mode's registration of the id with 409 that says nothing of the erasure", async () => {
    // As for a live dispatch of another issuer (api/registration.ts answerRepeat): when its owner
    // had it erased is the owner's business.
    for (const withKey of [otherKey, testKey]) {
      const res = await call('POST', '/v1/dispatches', { ...registration, id }, withKey);
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ error: 'conflict', message: `dispatch id ${id} is already in use; omit "id" to have one assigned` });
    }
  });

  it('answers a carrier event outside its time bounds with 404 saying it was erased, not 400 naming its dispatch date', async () => {
    // The API holds the facts of a dispatch it registered (ingest/carrier-events.ts dispatchFacts)
    // and checked the bounds before the tombstone: the 400 gave away the erased dispatch's date.
    const res = await postEvent(id, { status: 'in_transit', occurred_at: new Date(Date.parse(DISPATCH_DATE) - 30 * DAY).toISOString() });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not_found', message: expect.stringMatching(/was erased on/) });
    expect(res.text).not.toContain(new Date(Date.parse(DISPATCH_DATE) - 7 * DAY).toISOString().slice(0, 10));
  });

  it(
    'answers the dispatch reads and carrier events with 404 saying it was erased, and leaves it out of the list',
    async () => {
      const listed = await call('GET', '/v1/dispatches?limit=100');
      expect(listed.status).toBe(200);
      expect(listed.body.data.map((d: { id: string }) => d.id)).not.toContain(id);
      for (const res of [
        await call('GET', `/v1/status/${id}`),
        await postEvent(id, { status: 'in_transit', occurred_at: daysAgo(1) }),
        await call('GET', `/v1/dispatches/${id}/events`),
        await call('GET', `/v1/dispatches/${id}/tracking_links`),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body.message).toMatch(/was erased on/);
      }
      expect((await call('GET', `/v1/erasures/${erasureId}`)).body.status).toBe('pending');
      await completed(erasureId);
    },
    ERASURE_WAIT_MS + 30_000,
  );
});

describe('the erasure of a dispatch with a long life', () => {
  let a: string;
  let aPage: string;
  let b: string;
  let aEvents: string[];
  let historyRowId: number;
  let runsBefore: number;
  let bFootprint: Record<string, number>;
  let aFootprint: Record<string, number>;
  let aRetries: number;
  let erasureId: string;
  let outcomesBefore: Awaited<ReturnType<typeof loadRegistrationOutcomes>>;

  beforeAll(async () => {
    // A: registered with a test-only history threshold, so its workflow continues as new.
    a = randomUUID();
    // Registered and delivered promptly, so its delivery joins the transit history (db/transit-history.ts).
    const body = registrationFor(a, {
      dispatch_date: daysAgo(2),
      tracking_number: 'TRK-ERASE-1',
      carrier: 'La Poste',
      reference: 'REF-ERASE-1',
    });
    const registration = parseRegistration(body, { id: keyId, issuerId: issuer, mode: 'live', scopes: [] } as ApiKey);
    const registeredA = await registerDispatch(h.temporal, {
      taskQueue: h.taskQueue,
      registration,
      options: { ...dispatchWorkflowOptions(h.config), continueAsNewAfterEvents: 12 },
    });
    expect(registeredA.outcome).toBe('created');
    // An idempotency record whose replayed response holds A's record.
    const batch = await request(h.baseUrl, '/v1/dispatches/batch', {
      headers: { ...bearer(key), 'idempotency-key': `erase-${a}` },
      body: { dispatches: [body] },
    });
    expect(batch.status).toBe(200);
    expect((await postEvent(a, { status: 'in_transit', occurred_at: daysAgo(1.9), event_id: 'a-1', location: 'Paris' })).status).toBe(202);
    await until(async () => (await statusOf(a)) === 'in_transit', 'A in transit');
    expect((await postEvent(a, { status: 'in_transit', occurred_at: daysAgo(1.8), event_id: 'a-2', location: 'Lyon' })).status).toBe(202);
    // A tracking link with a postal-code gate: one wrong code, one right one.
    const link = await call('POST', `/v1/dispatches/${a}/tracking_links`, { require_postal_code: true });
    expect(link.status).toBe(201);
    const page = `/t/${(link.body.url as string).split('/t/')[1]}`;
    aPage = page;
    const form = (code: string) =>
      request(h.baseUrl, page, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `postal_code=${code}`,
      });
    await form('00000');
    await form('75011');
    // The claim of the dashboard form that made a link, leading to A's page (dashboard/submit-once.ts).
    const userId = `du_erasure_${a}`;
    const sessionHash = randomBytes(32);
    await h.pool.query('INSERT INTO dashboard_users (id, issuer_id, email) VALUES ($1, $2, $3)', [userId, issuer, `${userId}@example.com`]);
    await h.pool.query(`INSERT INTO dashboard_sessions (id_hash, user_id, csrf_token) VALUES ($1, $2, 'csrf')`, [sessionHash, userId]);
    const nonce = 'erasure-test-nonce-0123456789';
    await claimSubmission(h.pool, sessionHash, nonce, async () => ({
      location: `/dashboard/dispatches/${a}/tracking-links?created=${nonce}`,
      dispatchId: a,
    }));
    // Lost: the card rests in exception and its workflow completes; a later scan starts it again.
    expect((await postEvent(a, { status: 'exception', reason: 'lost', occurred_at: daysAgo(1.7), event_id: 'a-3' })).status).toBe(202);
    await until(async () => (await h.temporal.workflow.getHandle(a).describe()).status.name === 'COMPLETED', 'A completed', 30_000);
    expect((await postEvent(a, { status: 'delivered', occurred_at: daysAgo(0.1), event_id: 'a-4' })).status).toBe(202);
    await until(async () => (await statusOf(a)) === 'delivered', 'A delivered');
    aEvents = (await h.pool.query('SELECT id FROM webhook_events WHERE dispatch_id = $1', [a])).rows.map((r) => r.id);
    // Every delivery settled after its retries, then one event replayed.
    await until(async () => {
      const { rows } = await h.pool.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_id = ANY($1) AND state = 'pending'`, [aEvents]); // prettier-ignore
      return rows[0].n === 0;
    }, "A's deliveries settled");
    const delivered = (await h.pool.query('SELECT event_id FROM webhook_deliveries WHERE event_id = ANY($1) LIMIT 1', [aEvents])).rows[0];
    const replay = await replayDeliveries({ pool: h.pool, temporal: h.temporal, taskQueue: h.taskQueue }, { eventId: delivered.event_id });
    await replay!.handle.result();
    historyRowId = (await h.pool.query('SELECT id FROM transit_history WHERE dispatch_id = $1', [a])).rows[0]?.id;
    // A tracking feed's checkpoints with A's tracking number from another carrier (numbers are reused
    // across carriers): one kept unmatched, one ignored (its status says nothing); both name A's tracking number.
    const feed = await createFeed(h.baseUrl, key, 'easypost', 'whsec-erasure-test-0123456789');
    const early = await postInbound(
      h.baseUrl,
      'easypost',
      feed,
      easyPostBody(
        'TRK-ERASE-1',
        [
          { status: 'unknown', datetime: daysAgo(4) },
          { status: 'in_transit', datetime: daysAgo(3) },
        ],
        'UPS',
      ),
    );
    expect(early.body).toMatchObject({ unmatched: 1, ignored: 1 });

    // B: another dispatch of the same issuer, with an event and its webhook.
    b = await registered();
    expect((await postEvent(b, { status: 'in_transit', occurred_at: daysAgo(19), event_id: 'b-1' })).status).toBe(202);
    await until(async () => (await statusOf(b)) === 'in_transit', 'B in transit');
    await until(async () => {
      const { rows } = await h.pool.query(
        `SELECT count(*)::int AS n FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE e.dispatch_id = $1 AND d.state = 'delivered'`,
        [b],
      );
      return rows[0].n > 0;
    }, "B's webhook delivered");
    bFootprint = await dispatchFootprint(h.pool, b);
    aFootprint = await dispatchFootprint(h.pool, a);
    aRetries = (await h.pool.query(`SELECT count(*)::int AS n FROM delivery_attempts WHERE event_id = ANY($1) AND state_after = 'pending'`, [aEvents])).rows[0].n; // prettier-ignore
    runsBefore = await countDispatchRuns(h.temporal, a);
    outcomesBefore = await loadRegistrationOutcomes(h.pool, { issuerId: issuer });

    const res = await erase(a);
    expect(res.status).toBe(202);
    erasureId = res.body.id;
  }, 150_000);

  it('had a long life: several runs, webhook retries, a replay, gate rows, an idempotency record and a transit history row', async () => {
    // Registration, continue-as-new, the restart after the rest in exception: three runs at least.
    expect(runsBefore).toBeGreaterThanOrEqual(3);
    expect(aRetries).toBeGreaterThan(0);
    for (const [table, count] of Object.entries(aFootprint)) expect([table, count]).toEqual([table, expect.any(Number)]);
    expect(Object.entries(aFootprint).filter(([, count]) => count === 0)).toEqual([]);
    expect(aFootprint.transit_history).toBe(1);
    expect(historyRowId).toBeDefined();
  });

  it(
    'completes, saying how many rows and workflow runs it removed',
    async () => {
      const done = await completed(erasureId);
      expect(done.body).toEqual({
        id: erasureId,
        dispatch_id: a,
        status: 'completed',
        requested_at: expect.any(String),
        completed_at: expect.any(String),
        removed: { rows: expect.any(Number), workflow_runs: runsBefore },
      });
      expect(done.body.removed.rows).toBeGreaterThan(20);
    },
    ERASURE_WAIT_MS + 30_000,
  );

  it('leaves a footprint of 0 in every table and in Temporal (`dispatch footprint --json`)', async () => {
    await completed(erasureId);
    const cli = await runCli(['dispatch', 'footprint', '--id', a, '--json'], {
      DATABASE_URL: h.config.DATABASE_URL!,
      TEMPORAL_ADDRESS: h.config.TEMPORAL_ADDRESS!,
    });
    expect(cli.code).toBe(0);
    const footprint = JSON.parse(cli.stdout);
    expect(footprint.total).toBe(0);
    expect(footprint.workflow_runs).toBe(0);
    expect(Object.values(footprint.tables).every((n) => n === 0)).toBe(true);
    expect(Object.keys(footprint.tables)).toEqual(expect.arrayContaining(['dispatches', 'carrier_events', 'webhook_events', 'tracking_links', 'idempotency_keys'])); // prettier-ignore
    // Deliveries and attempts name only their event: none is left for A's events.
    const { rows } = await h.pool.query(
      `SELECT (SELECT count(*) FROM webhook_deliveries WHERE event_id = ANY($1))::int AS deliveries,
              (SELECT count(*) FROM delivery_attempts WHERE event_id = ANY($1))::int AS attempts,
              (SELECT count(*) FROM webhook_replays WHERE event_id = ANY($1))::int AS replays`,
      [aEvents],
    );
    expect(rows[0]).toEqual({ deliveries: 0, attempts: 0, replays: 0 });
  }, 90_000);

  it('keeps the transit history row without the dispatch id', async () => {
    await completed(erasureId);
    const { rows } = await h.pool.query('SELECT dispatch_id, business_days FROM transit_history WHERE id = $1', [historyRowId]);
    expect(rows).toEqual([{ dispatch_id: null, business_days: expect.any(Number) }]);
  }, 90_000);

  it('counts the erased delivery in the prediction quality report as before (its outcome names no dispatch)', async () => {
    await completed(erasureId);
    expect(outcomesBefore).toHaveLength(1);
    expect(await loadRegistrationOutcomes(h.pool, { issuerId: issuer })).toEqual(outcomesBefore);
  }, 90_000);

  it('leaves another dispatch of the same issuer untouched', async () => {
    await completed(erasureId);
    expect(await dispatchFootprint(h.pool, b)).toEqual(bFootprint);
    expect(await countDispatchRuns(h.temporal, b)).toBe(1);
    expect(await statusOf(b)).toBe('in_transit');
  }, 90_000);

  it('answers the status endpoint, carrier events and tracking links with 404 saying it was erased', async () => {
    await completed(erasureId);
    for (const res of [
      await call('GET', `/v1/status/${a}`),
      await postEvent(a, { status: 'delivered', occurred_at: daysAgo(0.05), event_id: 'a-late' }),
      await call('GET', `/v1/dispatches/${a}/tracking_links`),
      await call('GET', `/v1/dispatches/${a}/events`),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not_found', message: expect.stringMatching(/was erased on \d{4}-\d\d-\d\dT/) });
    }
    expect((await call('GET', `/v1/status/${a}`, undefined, otherKey)).status).toBe(403);
    expect((await dispatchFootprint(h.pool, a)).carrier_events).toBe(0);
  }, 90_000);

  it("answers its tracking link with the 404 page saying the card's tracking was erased, which shows nothing of it, counted as not_found (DESIGN §9's outcomes)", async () => {
    await completed(erasureId);
    const views = async () => (await scrape(`${h.baseUrl}/metrics`)).samples.filter((s) => s.name === 'cds_tracking_page_views_total');
    const notFound = async () => valueOf(await scrape(`${h.baseUrl}/metrics`), 'cds_tracking_page_views_total', { outcome: 'not_found' });
    const before = await notFound();
    const page = await request(h.baseUrl, aPage);
    expect(await notFound()).toBe(before + 1);
    for (const sample of await views()) expect(['ok', 'gate', 'not_found', 'gone', 'limited']).toContain(sample.labels.outcome);
    expect(page.status).toBe(404);
    expect(page.text).toContain('Tracking erased');
    expect(page.text).not.toContain('Link not found');
    for (const personal of ['75011', 'Erasure Issuer', 'TRK-ERASE-1', 'Paris']) expect(page.text).not.toContain(personal);
    // A token that never was a link still reads as unknown.
    const unknown = await request(h.baseUrl, `/t/${'x'.repeat(43)}`);
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain('Link not found');
  }, 90_000);

  it('refuses to register the id again: 409 conflict saying it was erased', async () => {
    await completed(erasureId);
    const res = await call('POST', '/v1/dispatches', registrationFor(a, { dispatch_date: DISPATCH_DATE }));
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'conflict', message: expect.stringContaining('was erased on') });
    expect(await countDispatchRuns(h.temporal, a)).toBe(0);
  }, 90_000);

  it('keeps only the tombstone: DELETE again answers the same, completed erasure', async () => {
    await completed(erasureId);
    const again = await erase(a);
    expect(again.status).toBe(202);
    expect(again.body).toEqual({ id: erasureId, dispatch_id: a, status: 'completed', requested_at: expect.any(String) });
  }, 90_000);
});

describe('the operator CLI: dispatch erase, issuer erase', () => {
  const cliEnv = () => ({
    DATABASE_URL: h.config.DATABASE_URL!,
    TEMPORAL_ADDRESS: h.config.TEMPORAL_ADDRESS!,
    TEMPORAL_TASK_QUEUE: h.taskQueue,
    WEBHOOK_TIMEOUT_MS: '1000',
  });

  it('dispatch erase --wait erases one dispatch and prints what it removed', async () => {
    const id = await registered();
    const cli = await runCli(['dispatch', 'erase', '--id', id, '--wait', '--json'], cliEnv(), 90_000);
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toEqual({
      id: expect.stringMatching(/^er_/),
      dispatch_id: id,
      status: 'completed',
      requested_at: expect.any(String),
      completed_at: expect.any(String),
      removed: { rows: expect.any(Number), workflow_runs: 1 },
    });
    expect(Object.values(await dispatchFootprint(h.pool, id)).every((n) => n === 0)).toBe(true);
  }, 120_000);

  it('issuer erase --confirm erases every dispatch of the issuer, then its keys, endpoints, users and branding; another issuer keeps its own', async () => {
    const leaving = await h.createIssuer('Leaving Issuer');
    const leavingKey = (await h.createKey(leaving)).key;
    const dispatches = [await registered(leavingKey), await registered(leavingKey), await registered(leavingKey)];
    // A run of the command that died after recording the erasure of its batch: the next run finishes it.
    await requestErasures(h.pool, [dispatches[2]]);
    expect((await call('POST', '/v1/webhook_endpoints', { url: receiver.url, events: ['status.updated'] }, leavingKey)).status).toBe(201);
    expect((await call('PATCH', '/v1/tracking_page', { display_name: 'Leaving Bank' }, leavingKey)).status).toBe(200);
    await h.pool.query(`INSERT INTO dashboard_users (id, issuer_id, email) VALUES ($1, $2, $3)`, [
      `usr_${randomUUID().replace(/-/g, '').slice(0, 16)}`,
      leaving,
      `${randomUUID()}@leaving.example`,
    ]);
    // A feed of the issuer with a checkpoint it ignored (it says nothing about where the card is).
    const leavingFeed = await createFeed(h.baseUrl, leavingKey, 'easypost', 'whsec-leaving-feed-0123456789');
    const ignoredBody = easyPostBody('LEAVING 0001', [{ status: 'unknown', datetime: new Date().toISOString() }]);
    expect((await postInbound(h.baseUrl, 'easypost', leavingFeed, ignoredBody)).body).toMatchObject({ ignored: 1 });
    const staying = await dispatchFootprint(h.pool, (await registered())!);

    const refused = await runCli(['issuer', 'erase', '--issuer', leaving], cliEnv());
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/--confirm/);

    const cli = await runCli(['issuer', 'erase', '--issuer', leaving, '--confirm', '--json'], cliEnv(), 120_000);
    expect(cli.code).toBe(0);
    const out = JSON.parse(cli.stdout);
    expect(out).toMatchObject({ issuer_id: leaving, erased_dispatches: 3 });
    expect(out.deleted).toMatchObject({ api_keys: 1, webhook_endpoints: 1, dashboard_users: 1, tracking_page_branding: 1, tracking_feeds: 1, feed_ignored_checkpoints: 1 }); // prettier-ignore
    for (const id of dispatches) expect(Object.values(await dispatchFootprint(h.pool, id)).every((n) => n === 0)).toBe(true);
    const { rows } = await h.pool.query(
      `SELECT (SELECT count(*) FROM api_keys WHERE issuer_id = $1)::int AS keys,
              (SELECT count(*) FROM webhook_endpoints WHERE issuer_id = $1)::int AS endpoints,
              (SELECT count(*) FROM dashboard_users WHERE issuer_id = $1)::int AS users,
              (SELECT count(*) FROM tracking_page_branding WHERE issuer_id = $1)::int AS branding,
              (SELECT count(*) FROM dispatches WHERE issuer_id = $1)::int AS dispatches,
              (SELECT count(*) FROM erasures WHERE issuer_id = $1 AND status = 'completed')::int AS tombstones`,
      [leaving],
    );
    expect(rows[0]).toEqual({ keys: 0, endpoints: 0, users: 0, branding: 0, dispatches: 0, tombstones: 3 });
    for (const id of dispatches) expect(await countDispatchRuns(h.temporal, id)).toBe(0);
    expect((await call('GET', '/v1/webhook_endpoints')).body.data).toHaveLength(1);
    expect(staying.dispatches).toBe(1);
  }, 180_000);
});
