// The dispatch workflow on the time-skipping test server, with its real activities writing to the
// real test Postgres: registration, the state machine end to end, dedupe across continue-as-new,
// the versioned projection and the terminal state.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Pool } from '../../db/pool.js';
import type { CarrierEventBody } from '../../domain/carrier-event-schemas.js';
import { dedupeKey } from '../../domain/state-machine.js';
import { signalCarrierEvents } from '../../temporal/client.js';
import { snapshotQuery, type DispatchRegistration, type DispatchWorkflowInput } from '../../temporal/contract.js';
import { maybeRecordHistory } from '../support/histories.js';
import {
  registerDispatch,
  signalCarrierEvent,
  insertIssuer,
  registration,
  startTimeSkippingTestbed,
  type TimeSkippingTestbed,
} from '../support/workflow-env.js';

let testbed: TimeSkippingTestbed;
let env: TestWorkflowEnvironment;
let pool: Pool;
let taskQueue: string;
let issuerId: string;

beforeAll(async () => {
  testbed = await startTimeSkippingTestbed();
  ({ env, pool, taskQueue } = testbed);
  issuerId = await insertIssuer(pool);
});

afterAll(async () => {
  await testbed?.stop();
});

const register = (reg: DispatchRegistration, options: DispatchWorkflowInput['options'] = {}) =>
  registerDispatch(env.client, taskQueue, reg, options);
const signal = (id: string, event: CarrierEventBody) => signalCarrierEvent(env.client, id, event);

async function projection(id: string) {
  const { rows } = await pool.query('SELECT version, status, record, exception_reason FROM dispatches WHERE id = $1', [id]);
  return rows[0];
}

/**
 * Waits (in real time, up to 30 s: CI machines can be busy) until the workflow has seen `seen`
 * distinct carrier events, folded them all, and made projection `version` durable.
 */
async function settled(id: string, version: number, seen = 0) {
  const snapshot = await settledWithin(id, version, seen, 30_000);
  if (!snapshot) throw new Error(`workflow ${id} did not reach version ${version}`);
  return snapshot;
}

async function settledWithin(id: string, version: number, seen: number, ms: number) {
  const handle = env.client.workflow.getHandle(id);
  for (const deadline = Date.now() + ms; Date.now() < deadline;) {
    // A query that races a continue-as-new can be routed to the run that just closed, which the
    // test server never answers: bound each query and ask again.
    const snapshot = await env.client.withDeadline(Date.now() + 2000, () => handle.query(snapshotQuery)).catch(() => undefined);
    if (!snapshot) continue;
    if (snapshot.pendingEvents === 0 && snapshot.version >= version && snapshot.seenEventKeys >= seen) return snapshot;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return undefined;
}

describe('registration', () => {
  it('writes the projection before the registration update answers (queryable at once)', async () => {
    const reg = registration(issuerId);
    const result = await register(reg);
    expect(result.outcome).toBe('created');
    const row = await projection(reg.id);
    expect(row.version).toBe(1);
    expect(row.status).toBe('dispatched');
    expect(row.record).toEqual('record' in result ? result.record : undefined);
  });

  it('answers a repeated identical registration with existing and the same record', async () => {
    const reg = registration(issuerId);
    await register(reg);
    const again = await register(reg);
    expect(again.outcome).toBe('existing');
  });

  it('answers a registration with a different body as a conflict', async () => {
    const reg = registration(issuerId);
    await register(reg);
    const other = await register({ ...reg, fingerprint: JSON.stringify({ destination: { postal_code: '1000', country_code: 'BE' } }) });
    expect(other).toEqual({ outcome: 'conflict', reason: expect.any(String) });
  });

  it("answers another issuer's registration of the same id as a conflict", async () => {
    const reg = registration(issuerId);
    await register(reg);
    const other = await register({ ...reg, issuerId: await insertIssuer(pool) });
    expect(other.outcome).toBe('conflict');
  });
});

describe('state machine through the workflow', () => {
  it('moves forward, may skip states, and bumps the projection version once per change', async () => {
    const reg = registration(issuerId);
    await register(reg);
    await signal(reg.id, { status: 'in_transit', occurred_at: '2026-11-20T12:00:00Z', event_id: 'e1' });
    await signal(reg.id, { status: 'delivered', occurred_at: '2026-11-21T10:00:00+01:00', event_id: 'e2' });
    await settled(reg.id, 3);
    const row = await projection(reg.id);
    expect(row).toMatchObject({ version: 3, status: 'delivered' });
    expect(row.record.ui_suggestion.recommended_action).toBe('Activate');
    expect(row.record.prediction.delivery_window).toEqual({ min: '2026-11-21', max: '2026-11-21' });
    await maybeRecordHistory(env.client.workflow.getHandle(reg.id), 'forward-to-delivered');
  });

  it('enters exception and leaves it on a later forward status', async () => {
    const reg = registration(issuerId);
    await register(reg);
    await signal(reg.id, { status: 'exception', occurred_at: '2026-11-21T08:00:00Z', reason: 'failed_attempt', event_id: 'x1' });
    await settled(reg.id, 2);
    expect(await projection(reg.id)).toMatchObject({ status: 'exception', exception_reason: 'failed_attempt' });
    expect((await projection(reg.id)).record.ui_suggestion.recommended_action).toBe('ContactSupport');
    await signal(reg.id, { status: 'out_for_delivery', occurred_at: '2026-11-22T08:00:00Z', event_id: 'x2' });
    await settled(reg.id, 3);
    expect(await projection(reg.id)).toMatchObject({ status: 'out_for_delivery', exception_reason: null });
    await maybeRecordHistory(env.client.workflow.getHandle(reg.id), 'exception-entered-and-left');
  });

  it('records an out-of-order older event without moving the card backwards', async () => {
    const reg = registration(issuerId);
    await register(reg);
    await signal(reg.id, { status: 'out_for_delivery', occurred_at: '2026-11-22T08:00:00Z', event_id: 'o1' });
    await settled(reg.id, 2);
    await signal(reg.id, { status: 'in_transit', occurred_at: '2026-11-21T08:00:00Z', event_id: 'o2' });
    await signal(reg.id, { status: 'exception', occurred_at: '2026-11-21T09:00:00Z', event_id: 'o3' });
    const snapshot = await settled(reg.id, 2, 3);
    expect(snapshot.state.status).toBe('out_for_delivery');
    expect(snapshot.version).toBe(2);
  });

  it('ignores a carrier event it has already seen (same dedupe key)', async () => {
    const reg = registration(issuerId);
    await register(reg);
    const event = { status: 'exception', occurred_at: '2026-11-21T08:00:00Z', reason: 'postal_delay' } as const;
    await signal(reg.id, event);
    await signal(reg.id, event);
    // Signals arrive in order: once this third one is seen, the duplicate has been handled.
    await signal(reg.id, { status: 'exception', occurred_at: '2026-11-21T09:00:00Z', reason: 'postal_delay', event_id: 'later' });
    const snapshot = await settled(reg.id, 3, 2);
    expect(snapshot.version).toBe(3);
    expect(snapshot.seenEventKeys).toBe(2);
  });

  it('takes a carrierEvents chunk as if each of its events came on its own signal: in order, a key already seen dropped', async () => {
    const reg = registration(issuerId);
    await register(reg);
    const keyed = (event: CarrierEventBody) => ({ ...event, dedupeKey: dedupeKey(event) });
    const transit = { status: 'in_transit', occurred_at: '2026-11-20T12:00:00Z', event_id: 'c1' } as const;
    await signal(reg.id, transit);
    const exception = { status: 'exception', occurred_at: '2026-11-21T08:00:00Z', reason: 'failed_attempt', event_id: 'c2' } as const;
    const out = { status: 'out_for_delivery', occurred_at: '2026-11-22T08:00:00Z', event_id: 'c3' } as const;
    expect(await signalCarrierEvents(env.client, reg.id, [transit, exception, out, exception].map(keyed))).toBe(true);
    // In the chunk's order: the exception, then the later out_for_delivery leaving it (reversed,
    // the older exception would change nothing); the repeats of c1 and c2 changed nothing.
    const snapshot = await settled(reg.id, 4, 3);
    expect(snapshot).toMatchObject({ version: 4, seenEventKeys: 3, state: { status: 'out_for_delivery' } });
    expect(await projection(reg.id)).toMatchObject({ version: 4, status: 'out_for_delivery', exception_reason: null });
    await maybeRecordHistory(env.client.workflow.getHandle(reg.id), 'carrier-events-chunk');
  });

  it('keeps delivered terminal and completes once the retention after delivery has passed', async () => {
    const reg = registration(issuerId);
    await register(reg, { deliveredRetentionMs: 3 * 24 * 3600 * 1000 });
    await signal(reg.id, { status: 'delivered', occurred_at: '2026-11-21T10:00:00Z', event_id: 'd1' });
    await settled(reg.id, 2);
    await signal(reg.id, { status: 'exception', occurred_at: '2026-11-23T10:00:00Z', event_id: 'd2' });
    const snapshot = await settled(reg.id, 2, 2);
    expect(snapshot.state.status).toBe('delivered');
    // Time skipping: three days pass in well under a second of wall time.
    const result = await env.client.workflow.getHandle(reg.id).result();
    expect(result).toEqual({ status: 'delivered', version: 2 });
    await maybeRecordHistory(env.client.workflow.getHandle(reg.id), 'delivered-then-completed');
  });

  it('completes a card resting in exception once no carrier event came for the exception retention', async () => {
    const reg = registration(issuerId);
    await register(reg, { exceptionRetentionMs: 30 * 24 * 3600 * 1000 });
    await signal(reg.id, { status: 'exception', reason: 'lost', occurred_at: '2026-11-21T10:00:00Z', event_id: 'l1' });
    await settled(reg.id, 2, 1);
    // Time skipping: thirty days pass in well under a second of wall time.
    const result = await env.client.workflow.getHandle(reg.id).result();
    expect(result).toEqual({ status: 'exception', version: 2 });
    expect(await projection(reg.id)).toMatchObject({ status: 'exception', exception_reason: 'lost' });
  });

  it('stays open in transit: only a resting card completes', async () => {
    const reg = registration(issuerId);
    await register(reg, { exceptionRetentionMs: 1000, deliveredRetentionMs: 1000 });
    await signal(reg.id, { status: 'in_transit', occurred_at: '2026-11-21T10:00:00Z', event_id: 't1' });
    await settled(reg.id, 2, 1);
    await env.sleep('2 days');
    expect((await env.client.workflow.getHandle(reg.id).describe()).status.name).toBe('RUNNING');
  });
});

/**
 * Sends the events, and sends them again every 3 s until the workflow has settled on `version`, as a
 * carrier feed retries (dedupe makes a repeat harmless). The time-skipping test server can lose a
 * signal that arrives while the run that received it completes with continue-as-new (a real server
 * rejects that completion and hands the signal to the run), so a single send would make this test
 * depend on timing.
 */
async function signalUntilSettled(id: string, events: CarrierEventBody[], version: number, seen = 0) {
  for (let round = 0; round < 10; round++) {
    for (const event of events) await signal(id, event);
    const snapshot = await settledWithin(id, version, seen, 3000);
    if (snapshot) return snapshot;
  }
  throw new Error(`workflow ${id} did not reach version ${version}`);
}

describe('continue-as-new', () => {
  it('carries state and carrier-event dedupe across continue-as-new', async () => {
    const reg = registration(issuerId);
    await register(reg, { continueAsNewAfterEvents: 12 });
    const handle = env.client.workflow.getHandle(reg.id);
    const firstRunId = (await handle.describe()).runId;
    const first = { status: 'in_transit', occurred_at: '2026-11-20T12:00:00Z', event_id: 'c1' } as const;
    await signalUntilSettled(
      reg.id,
      [
        first,
        { status: 'exception', occurred_at: '2026-11-20T13:00:00Z', event_id: 'c2', reason: 'postal_delay' },
        { status: 'exception', occurred_at: '2026-11-20T14:00:00Z', event_id: 'c3', reason: 'postal_delay' },
      ],
      4,
    );
    let runId = firstRunId;
    for (const deadline = Date.now() + 30_000; runId === firstRunId && Date.now() < deadline;) {
      runId = (await handle.describe()).runId;
      if (runId === firstRunId) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(runId).not.toBe(firstRunId);
    const snapshot = await signalUntilSettled(
      reg.id,
      [first, { status: 'exception', occurred_at: '2026-11-20T15:00:00Z', event_id: 'c4', reason: 'postal_delay' }],
      5,
      4,
    );
    // c1 again changed nothing (no new version for it, still 4 distinct keys); c4 made version 5.
    expect(snapshot).toMatchObject({ version: 5, seenEventKeys: 4, state: { status: 'exception' } });
    expect((await projection(reg.id)).version).toBe(5);
    await maybeRecordHistory(env.client.workflow.getHandle(reg.id, firstRunId), 'continued-as-new-first-run');
  });
});
