// POST /v1/dispatches/{id}/events (docs/http-contract.md): 202 with duplicate false/true, 404, 403, 400
// naming the field, and events for a dispatch whose workflow has already closed (delivered: 202;
// rested in exception: 202, and its workflow starts again, also once Temporal has deleted its closed run;
// terminated or failed undelivered: 409).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { carrierEventEffect, insertCarrierEvent } from '../../db/carrier-events.js';
import { dedupeKey } from '../../domain/state-machine.js';
import { createCarrierEventIngest } from '../../ingest/carrier-events.js';
import { dispatchWorkflowOptions } from '../../temporal/client.js';
import { startHarness, type Harness } from '../support/harness.js';
import { scrape, valueOf } from '../support/prometheus.js';
import { bearer, registrationFor, request, type TestResponse } from './http.js';

let h: Harness;

// Dates relative to today, within the time bounds of docs/http-contract.md "Input bounds and integrity promises".
const DAY = 86_400_000;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY).toISOString();
const DISPATCH_DATE = daysAgo(20);
const SCAN_AT = daysAgo(19);
/** SCAN_AT written with a +01:00 offset. */
const SCAN_AT_PLUS_ONE_HOUR_OFFSET = `${new Date(Date.parse(SCAN_AT) + 3_600_000).toISOString().slice(0, 23)}+01:00`;
const DELIVERED_AT = daysAgo(18);
const LATE_AT = daysAgo(17);
let key: string;
let otherIssuerKey: string;
let testModeKey: string;

const postEvent = (id: string, body: unknown, withKey = key) =>
  request(h.baseUrl, `/v1/dispatches/${id}/events`, { headers: bearer(withKey), body });

async function registered(): Promise<string> {
  const id = randomUUID();
  const res = await request(h.baseUrl, '/v1/dispatches', {
    headers: bearer(key),
    body: registrationFor(id, { dispatch_date: DISPATCH_DATE }),
  });
  expect(res.status).toBe(201);
  return id;
}

async function statusUntil(id: string, done: (res: TestResponse) => boolean): Promise<TestResponse> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const res = await request(h.baseUrl, `/v1/status/${id}`, { headers: bearer(key) });
    if (done(res) || Date.now() > deadline) return res;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  // A resting dispatch's workflow closes after these retentions, so closed workflows can be tested.
  h = await startHarness({ env: { DELIVERED_RETENTION: '1s', EXCEPTION_RETENTION: '2s' } });
  const issuer = await h.createIssuer('Events Issuer');
  key = (await h.createKey(issuer)).key;
  testModeKey = (await h.createKey(issuer, { mode: 'test' })).key;
  otherIssuerKey = (await h.createKey(await h.createIssuer('Other Issuer'))).key;
});

afterAll(async () => {
  await h?.stop();
});

describe('POST /v1/dispatches/{id}/events', () => {
  it('returns 202 with duplicate false and moves the dispatch on', async () => {
    const id = await registered();
    const res = await postEvent(id, { status: 'in_transit', occurred_at: SCAN_AT, event_id: 'evt-1' });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: true, duplicate: false });
    const status = await statusUntil(id, (r) => r.body.status === 'in_transit');
    expect(status.body.status).toBe('in_transit');
  });

  it('returns 202 with duplicate true for a repeated event_id', async () => {
    const id = await registered();
    expect((await postEvent(id, { status: 'in_transit', occurred_at: SCAN_AT, event_id: 'evt-7' })).body.duplicate).toBe(false);
    const res = await postEvent(id, { status: 'in_transit', occurred_at: SCAN_AT, event_id: 'evt-7' });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: true, duplicate: true });
  });

  it('returns 202 with duplicate true for the same status and occurred_at without event_id', async () => {
    const id = await registered();
    await postEvent(id, { status: 'in_transit', occurred_at: SCAN_AT_PLUS_ONE_HOUR_OFFSET });
    const res = await postEvent(id, { status: 'in_transit', occurred_at: SCAN_AT });
    expect(res.body).toEqual({ accepted: true, duplicate: true });
  });

  it('still moves the dispatch on when a retried event was stored by a request that stopped before signalling (an API crash)', async () => {
    const id = await registered();
    const event = { status: 'in_transit' as const, occurred_at: SCAN_AT, event_id: 'crashed-before-signal' };
    // What the first request left behind when its process died between the insert and the signal.
    expect(await insertCarrierEvent(h.pool, id, dedupeKey(event), event)).toBe(true);
    const res = await postEvent(id, event);
    expect(res.body).toEqual({ accepted: true, duplicate: true });
    const status = await statusUntil(id, (r) => r.body.status === 'in_transit');
    expect(status.body.status).toBe('in_transit');
    expect(await carrierEventEffect(h.pool, id, dedupeKey(event))).toBe('applied');
  });

  it('records the event in carrier_events', async () => {
    const id = await registered();
    await postEvent(id, { status: 'exception', reason: 'postal_delay', occurred_at: SCAN_AT, location: 'Paris' });
    const { rows } = await h.pool.query('SELECT status, reason, location FROM carrier_events WHERE dispatch_id = $1', [id]);
    expect(rows).toEqual([{ status: 'exception', reason: 'postal_delay', location: 'Paris' }]);
  });

  it('lists an exception sent without reason with the reason it acted on, other (docs/carrier-events.md)', async () => {
    const id = await registered();
    expect((await postEvent(id, { status: 'exception', occurred_at: SCAN_AT })).status).toBe(202);
    const res = await request(h.baseUrl, `/v1/dispatches/${id}/events`, { headers: bearer(key) });
    expect(res.body.data).toEqual([expect.objectContaining({ status: 'exception', reason: 'other' })]);
  });

  it('returns 404 for an unknown dispatch', async () => {
    const res = await postEvent(randomUUID(), { status: 'in_transit', occurred_at: SCAN_AT });
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('not_found');
  });

  it("returns 403 for another issuer's dispatch", async () => {
    const id = await registered();
    const res = await postEvent(id, { status: 'in_transit', occurred_at: SCAN_AT }, otherIssuerKey);
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
  });

  it('returns 404 to a key of the other mode', async () => {
    const id = await registered();
    const res = await postEvent(id, { status: 'in_transit', occurred_at: SCAN_AT }, testModeKey);
    expect(res.status).toBe(404);
  });

  it('returns 400 when the id is not a UUID v4', async () => {
    const res = await postEvent('12345', { status: 'in_transit', occurred_at: SCAN_AT });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^id: /);
  });

  it('returns 400 naming status when it is not a known status', async () => {
    const id = await registered();
    const res = await postEvent(id, { status: 'lost_in_space', occurred_at: SCAN_AT });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^status: /);
  });

  it('returns 400 naming occurred_at when it is missing', async () => {
    const id = await registered();
    const res = await postEvent(id, { status: 'in_transit' });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^occurred_at: /);
  });

  it('returns 400 naming reason when it is not a known exception reason', async () => {
    const id = await registered();
    const res = await postEvent(id, { status: 'exception', reason: 'aliens', occurred_at: SCAN_AT });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^reason: /);
  });

  it.each(['dispatched', 'in_transit', 'out_for_delivery', 'delivered'])(
    'returns 400 naming reason for a reason on a %s event (a reason belongs to an exception), storing nothing',
    async (status) => {
      const id = await registered();
      const res = await postEvent(id, { status, reason: 'lost', occurred_at: SCAN_AT });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'bad_request', message: expect.stringMatching(/^reason: .*exception/) });
      const { rows } = await h.pool.query('SELECT 1 FROM carrier_events WHERE dispatch_id = $1', [id]);
      expect(rows).toHaveLength(0);
    },
  );

  it('returns 400 before looking up the dispatch, so an unknown id with a bad body is 400', async () => {
    const res = await postEvent(randomUUID(), { status: 'in_transit', occurred_at: 'soon' });
    expect(res.status).toBe(400);
  });
});

describe('events for a dispatch whose workflow has closed', () => {
  let id: string;

  beforeAll(async () => {
    id = await registered();
    expect((await postEvent(id, { status: 'delivered', occurred_at: DELIVERED_AT })).status).toBe(202);
    await statusUntil(id, (r) => r.body.status === 'delivered');
    // Retention is 1 s: wait until Temporal reports the workflow closed.
    const deadline = Date.now() + 15_000;
    let workflowStatus = 'RUNNING';
    while (workflowStatus === 'RUNNING' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      workflowStatus = (await h.temporal.workflow.getHandle(id).describe()).status.name;
    }
    expect(workflowStatus).toBe('COMPLETED');
  });

  it('accepts a late event with 202, records it as after_delivery and counts it by that effect (the API decides it)', async () => {
    const before = await effectCount('after_delivery');
    const res = await postEvent(id, { status: 'exception', reason: 'damaged', occurred_at: LATE_AT, event_id: 'late-1' });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: true, duplicate: false });
    const { rows } = await h.pool.query('SELECT effect FROM carrier_events WHERE dispatch_id = $1 AND event_id = $2', [id, 'late-1']);
    expect(rows[0].effect).toBe('after_delivery');
    expect(await effectCount('after_delivery')).toBe(before + 1);
  });

  it('answers a repeated registration from the projection with 200', async () => {
    const res = await request(h.baseUrl, '/v1/dispatches', {
      headers: bearer(key),
      body: registrationFor(id, { dispatch_date: DISPATCH_DATE }),
    });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('delivered');
  });
});

/** Waits until Temporal reports the dispatch's workflow closed. */
async function workflowClosed(id: string): Promise<string> {
  const deadline = Date.now() + 15_000;
  let workflowStatus = 'RUNNING';
  while (workflowStatus === 'RUNNING' && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    workflowStatus = (await h.temporal.workflow.getHandle(id).describe()).status.name;
  }
  return workflowStatus;
}

describe('events for a dispatch whose workflow completed resting in exception (docs/states.md "Closed dispatches")', () => {
  let id: string;

  beforeAll(async () => {
    id = await registered();
    expect((await postEvent(id, { status: 'exception', reason: 'lost', occurred_at: SCAN_AT, event_id: 'lost-1' })).status).toBe(202);
    await statusUntil(id, (r) => r.body.status === 'exception');
    // Exception retention is 2 s with no carrier event: the workflow completes.
    expect(await workflowClosed(id)).toBe('COMPLETED');
  });

  it('accepts a later event with 202, starts the workflow again from the projection and applies it: exception → delivered', async () => {
    const res = await postEvent(id, { status: 'delivered', occurred_at: DELIVERED_AT, event_id: 'found-1' });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: true, duplicate: false });
    const status = await statusUntil(id, (r) => r.body.status === 'delivered');
    expect(status.body.status).toBe('delivered');
    const effects = await h.pool.query('SELECT event_id, effect FROM carrier_events WHERE dispatch_id = $1 ORDER BY received_at', [id]);
    expect(effects.rows).toEqual([
      { event_id: 'lost-1', effect: 'applied' },
      { event_id: 'found-1', effect: 'applied' },
    ]);
  });

  it('starts again with the events it had folded: a repeat of one of them is a duplicate that changes nothing', async () => {
    const version = (await h.pool.query('SELECT version FROM dispatches WHERE id = $1', [id])).rows[0].version;
    const res = await postEvent(id, { status: 'exception', reason: 'lost', occurred_at: SCAN_AT, event_id: 'lost-1' });
    expect(res.status).toBe(202);
    expect(res.body.duplicate).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await h.pool.query('SELECT version FROM dispatches WHERE id = $1', [id])).rows[0].version).toBe(version);
  });
});

describe("a chunk of events (ingestMany, a tracking feed's history) for a dispatch whose workflow completed resting in exception", () => {
  it('starts the workflow again with the first event and signals it the rest of the chunk, in order: each accepted, all applied', async () => {
    const id = await registered();
    expect((await postEvent(id, { status: 'exception', reason: 'lost', occurred_at: SCAN_AT, event_id: 'chunk-lost' })).status).toBe(202);
    await statusUntil(id, (r) => r.body.status === 'exception');
    expect(await workflowClosed(id)).toBe('COMPLETED');
    const ingest = createCarrierEventIngest({ pool: h.pool, temporal: h.temporal, taskQueue: h.taskQueue, workflowOptions: dispatchWorkflowOptions(h.config) }); // prettier-ignore
    const events = [
      { status: 'in_transit', occurred_at: daysAgo(18.5), event_id: 'chunk-found' },
      { status: 'out_for_delivery', occurred_at: DELIVERED_AT, event_id: 'chunk-out' },
      { status: 'delivered', occurred_at: LATE_AT, event_id: 'chunk-delivered' },
    ] as const;
    const outcomes = await ingest.ingestMany(
      { id, dispatchDate: DISPATCH_DATE },
      events.map((event) => ({ event })),
    );
    expect(outcomes.map((o) => o.outcome === 'accepted' && o.duplicate)).toEqual([false, false, false]);
    expect((await statusUntil(id, (r) => r.body.status === 'delivered')).body.status).toBe('delivered');
    const effects = await h.pool.query('SELECT event_id, effect FROM carrier_events WHERE dispatch_id = $1 ORDER BY received_at', [id]);
    expect(effects.rows).toEqual([
      { event_id: 'chunk-lost', effect: 'applied' },
      { event_id: 'chunk-found', effect: 'applied' },
      { event_id: 'chunk-out', effect: 'applied' },
      { event_id: 'chunk-delivered', effect: 'applied' },
    ]);
  });
});

describe('events for a dispatch whose workflow closed without delivery (docs/states.md "Closed dispatches")', () => {
  let id: string;

  beforeAll(async () => {
    id = await registered();
    // An operator terminates the workflow: the card was never delivered.
    await h.temporal.workflow.getHandle(id).terminate('closed by an operator in a test');
  });

  it('answers 409 conflict saying the dispatch is closed, and keeps the event with effect workflow_closed, counted by that effect', async () => {
    const before = await effectCount('workflow_closed');
    const res = await postEvent(id, { status: 'in_transit', occurred_at: SCAN_AT, event_id: 'after-terminate-1' });
    expect(await effectCount('workflow_closed')).toBe(before + 1);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'conflict', message: expect.stringMatching(/closed.*not delivered|not delivered.*closed/) });
    const { rows } = await h.pool.query('SELECT status, effect FROM carrier_events WHERE dispatch_id = $1 AND event_id = $2', [
      id,
      'after-terminate-1',
    ]);
    expect(rows).toEqual([{ status: 'in_transit', effect: 'workflow_closed' }]);
  });

  it('answers 409 again when the same event is sent again, counting it no more', async () => {
    const before = await effectCount('workflow_closed');
    const res = await postEvent(id, { status: 'in_transit', occurred_at: SCAN_AT, event_id: 'after-terminate-1' });
    expect(res.status).toBe(409);
    expect(await effectCount('workflow_closed')).toBe(before);
  });
});

describe('events for a dispatch resting in exception whose closed run Temporal has deleted (docs/states.md "Closed dispatches")', () => {
  let id: string;

  beforeAll(async () => {
    id = await registered();
    expect((await postEvent(id, { status: 'exception', reason: 'returned', occurred_at: SCAN_AT, event_id: 'returned-1' })).status).toBe(
      202,
    );
    await statusUntil(id, (r) => r.body.status === 'exception');
    expect(await workflowClosed(id)).toBe('COMPLETED');
    // What the namespace's retention does to a closed run, done now.
    const { runId } = await h.temporal.workflow.getHandle(id).describe();
    await h.temporal.workflowService.deleteWorkflowExecution({
      namespace: h.temporal.options.namespace,
      workflowExecution: { workflowId: id, runId },
    });
    const deadline = Date.now() + 60_000;
    for (let seen = ''; ;) {
      const gone = await h.temporal.workflow
        .getHandle(id)
        .describe()
        .then(
          (d) => ((seen = d.status.name), false),
          (error: Error) => ((seen = error.name), error.name === 'WorkflowNotFoundError'),
        );
      if (gone) break;
      if (Date.now() > deadline) throw new Error(`run of ${id} not deleted: ${seen}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });

  it('accepts a later event with 202 and starts the workflow again from the projection, not 409', async () => {
    const res = await postEvent(id, { status: 'delivered', occurred_at: DELIVERED_AT, event_id: 'back-1' });
    expect(res.status).toBe(202);
    expect((await statusUntil(id, (r) => r.body.status === 'delivered')).body.status).toBe('delivered');
    const { rows } = await h.pool.query('SELECT event_id, effect FROM carrier_events WHERE dispatch_id = $1 ORDER BY received_at', [id]);
    expect(rows).toEqual([
      { event_id: 'returned-1', effect: 'applied' },
      { event_id: 'back-1', effect: 'applied' },
    ]);
  });
});

/** cds_carrier_events_total{effect} as the API's /metrics reads now. */
async function effectCount(effect: string): Promise<number> {
  return valueOf(await scrape(`${h.baseUrl}/metrics`), 'cds_carrier_events_total', { effect });
}
