// The bulk prediction refresh on the time-skipping test server, with its real activities against
// the test Postgres: only dispatches whose window changed are signalled, each of those writes a new
// projection version with delivery.predicted, an unchanged dispatch's history does not grow, and no
// dispatch is refreshed twice within an hour. Operator delays per postal prefix of Slovenia (a
// country no other test uses) change the windows of chosen dispatches only.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { clearCarrierConditions, setCarrierCondition } from '../../db/conditions.js';
import type { Pool } from '../../db/pool.js';
import { PREDICTION_REFRESH_WORKFLOW_TYPE, type PredictionRefreshRequest, type PredictionRefreshSummary } from '../../temporal/contract.js';
import {
  insertIssuer,
  registerDispatch,
  registration,
  seedTransitHistory,
  startTimeSkippingTestbed,
  type TimeSkippingTestbed,
} from '../support/workflow-env.js';
import { until } from '../support/until.js';

const COUNTRY = 'SI';

let testbed: TimeSkippingTestbed;
let env: TestWorkflowEnvironment;
let pool: Pool;
let issuerId: string;

beforeAll(async () => {
  testbed = await startTimeSkippingTestbed();
  ({ env, pool } = testbed);
  issuerId = await insertIssuer(pool);
  await seedTransitHistory(pool, COUNTRY, ['1000', '2000', '3000']);
});

afterAll(async () => {
  if (pool) await clearCarrierConditions(pool, { countryCode: COUNTRY });
  await testbed?.stop();
});

/** Registers a dispatch to a Slovenian postal code, dispatched now. */
async function registerTo(postalCode: string): Promise<string> {
  const reg = registration(issuerId, {
    dispatchDate: new Date().toISOString(),
    destination: { postal_code: postalCode, country_code: COUNTRY },
  });
  await registerDispatch(env.client, testbed.taskQueue, reg);
  return reg.id;
}

const delay = (postalPrefix: string, delayDays: number) =>
  setCarrierCondition(pool, { countryCode: COUNTRY, postalPrefix, delayDays, until: null });

/**
 * One run of the refresh, as the Schedule starts it; returns once every signal has been sent. Through
 * a plain client: the testbed's client lets the test server skip time while it waits for a result,
 * and with no timer pending that skip would run every open dispatch into its 10-year timeout.
 */
async function refresh(): Promise<PredictionRefreshSummary> {
  const plain = new Client({ connection: env.connection, namespace: env.namespace ?? 'default' });
  return plain.workflow.execute(PREDICTION_REFRESH_WORKFLOW_TYPE, {
    taskQueue: testbed.taskQueue,
    workflowId: `refresh-${randomUUID()}`,
  }) as Promise<PredictionRefreshSummary>;
}

async function projection(id: string): Promise<{ version: number; window_min: string; window_max: string }> {
  const { rows } = await pool.query('SELECT version, window_min, window_max FROM dispatches WHERE id = $1', [id]);
  return rows[0];
}

async function projectedVersion(id: string, version: number) {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
    const row = await projection(id);
    if (row.version >= version) return row;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`dispatch ${id} did not reach projection version ${version}`);
}

async function predictedEvents(id: string): Promise<string[]> {
  const { rows } = await pool.query<{ idempotency_key: string }>(
    "SELECT idempotency_key FROM webhook_events WHERE dispatch_id = $1 AND type = 'delivery.predicted' ORDER BY created_at",
    [id],
  );
  return rows.map((row) => row.idempotency_key);
}

async function refreshSignals(id: string): Promise<number> {
  const history = await env.client.workflow.getHandle(id).fetchHistory();
  return (history.events ?? []).filter((event) => event.workflowExecutionSignaledEventAttributes?.signalName === 'refreshPrediction')
    .length;
}

/** The requests of the refresh signals a dispatch received, as its workflow history holds them. */
async function refreshRequests(id: string): Promise<PredictionRefreshRequest[]> {
  const history = await env.client.workflow.getHandle(id).fetchHistory();
  return (history.events ?? [])
    .map((event) => event.workflowExecutionSignaledEventAttributes)
    .filter((signal) => signal?.signalName === 'refreshPrediction')
    .map((signal) => defaultPayloadConverter.fromPayload<PredictionRefreshRequest>(signal!.input!.payloads![0]));
}

const historyLength = async (id: string) => (await env.client.workflow.getHandle(id).describe()).historyLength;

describe('prediction refresh', () => {
  it('gives a dispatch whose window changed a new projection version and a delivery.predicted event', async () => {
    const id = await registerTo('1000');
    const before = await projection(id);
    await delay('10', 3);
    const summary = await refresh();
    expect(summary.signalled).toBeGreaterThanOrEqual(1);
    const after = await projectedVersion(id, 2);
    expect(after.version).toBe(2);
    expect(after.window_max > before.window_max).toBe(true);
    // The projection row is written a statement before the webhook events it fires: wait for them.
    const expected = [`${id}:1:delivery.predicted`, `${id}:2:delivery.predicted`];
    await until(async () => (await predictedEvents(id)).length >= expected.length, 'the second delivery.predicted event');
    expect(await predictedEvents(id)).toEqual(expected);
  });

  it('does not signal an unchanged dispatch: its workflow history does not grow across two refreshes', async () => {
    const id = await registerTo('2000');
    const changed = await registerTo('1001');
    const length = await historyLength(id);
    await delay('10', 4);
    await refresh();
    await refresh();
    expect(await historyLength(id)).toBe(length);
    expect((await projection(id)).version).toBe(1);
    // The same refreshes did reach a dispatch whose window the delay changed.
    expect(await refreshSignals(changed)).toBe(1);
  });

  it('does not refresh a dispatch twice within an hour, even when its window changed again', async () => {
    const id = await registerTo('3000');
    await delay('30', 2);
    await refresh();
    await projectedVersion(id, 2);
    await delay('30', 5);
    await refresh();
    expect(await refreshSignals(id)).toBe(1);
    expect((await projection(id)).version).toBe(2);
  });

  it('refreshes a changed dispatch again once an hour has passed since its last refresh', async () => {
    const id = await registerTo('3100');
    await delay('31', 2);
    await refresh();
    await projectedVersion(id, 2);
    await delay('31', 5);
    await env.sleep('61 minutes');
    await refresh();
    expect((await projectedVersion(id, 3)).version).toBe(3);
    expect(await refreshSignals(id)).toBe(2);
  });

  it('tells a signalled dispatch when the country statistics it was compared with were loaded, during the run', async () => {
    const id = await registerTo('4000');
    await delay('40', 2);
    const before = Date.now();
    await refresh();
    const [request] = await refreshRequests(id);
    expect(request.version).toBe(1);
    expect(Date.parse(request.statisticsAsOf!)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(request.statisticsAsOf!)).toBeLessThanOrEqual(Date.now());
  });

  it('drops a refresh signal that compared with an older projection version than the current one', async () => {
    const id = await registerTo('2001');
    const handle = env.client.workflow.getHandle(id);
    await handle.signal('refreshPrediction', { version: 0 });
    // A query is answered only after the signal's workflow task: the refresh has been handled by then.
    await handle.query('snapshot');
    expect((await projection(id)).version).toBe(1);
  });
});
