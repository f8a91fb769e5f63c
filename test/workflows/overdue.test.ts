// Overdue cards (docs/states.md "Overdue"): the hourly prediction refresh on the time-skipping test server, with its
// real activities against a Postgres database of this file's own (a refresh reads every dispatch
// of its database, and these runs move the refresh's clock days ahead: other files' dispatches must
// not see them). A card not delivered OVERDUE_BUSINESS_DAYS (10) business days after its window's
// max enters exception `overdue` through a carrier-event signal and leaves the refresh; before
// that, a passed window is re-estimated at most once per business day. Slovenia's calendar.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { setCarrierCondition } from '../../db/conditions.js';
import { createPool, type Pool } from '../../db/pool.js';
import { businessDayOnOrAfter, isBusinessDay, nextBusinessDay } from '../../domain/calendar.js';
import { PREDICTION_REFRESH_WORKFLOW_TYPE, type PredictionRefreshSummary } from '../../temporal/contract.js';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratch-database.js';
import { until } from '../support/until.js';
import {
  createTestWorker,
  createTimeSkippingEnv,
  insertIssuer,
  registerDispatch,
  registration,
  seedTransitHistory,
  signalCarrierEvent,
} from '../support/workflow-env.js';

const COUNTRY = 'SI';
const DAY_MS = 86_400_000;

let database: ScratchDatabase;
let pool: Pool;
let env: TestWorkflowEnvironment;
let worker: Worker;
let running: Promise<void>;
let taskQueue: string;
let issuerId: string;

beforeAll(async () => {
  database = await createScratchDatabase('overdue', { migrate: true });
  pool = createPool(database.url, { applicationName: 'test-overdue' });
  env = await createTimeSkippingEnv();
  ({ worker, taskQueue } = await createTestWorker(env, pool));
  running = worker.run();
  issuerId = await insertIssuer(pool);
  await seedTransitHistory(pool, COUNTRY, ['1000', '5000']);
}, 120_000);

afterAll(async () => {
  worker?.shutdown();
  await running;
  await pool?.end();
  await env?.teardown();
  await database?.drop();
});

/** Registers a dispatch to a Slovenian postal code, handed to the carrier `daysAgo` days ago. */
async function registerDispatchedDaysAgo(daysAgo: number, postalCode = '1000'): Promise<string> {
  return registerDispatchedAt(new Date(Date.now() - daysAgo * DAY_MS).toISOString(), postalCode);
}

async function registerDispatchedAt(dispatchDate: string, postalCode: string): Promise<string> {
  const reg = registration(issuerId, { dispatchDate, destination: { postal_code: postalCode, country_code: COUNTRY } });
  await registerDispatch(env.client, taskQueue, reg);
  return reg.id;
}

/** The Slovenian business day `n` business days before `date`: addBusinessDays(result, n) is `date`. */
function businessDaysBefore(date: string, n: number): string {
  let day = date;
  for (let left = n; left > 0;) {
    day = new Date(Date.parse(`${day}T00:00:00Z`) - DAY_MS).toISOString().slice(0, 10);
    if (isBusinessDay(day, COUNTRY)) left -= 1;
  }
  return day;
}

/**
 * One run of the refresh, as the Schedule starts it, at the test server's current time. Through a
 * plain client: the testbed's client would let the server skip time while it waits for the result.
 */
async function refresh(): Promise<PredictionRefreshSummary> {
  const plain = new Client({ connection: env.connection, namespace: env.namespace ?? 'default' });
  return plain.workflow.execute(PREDICTION_REFRESH_WORKFLOW_TYPE, { taskQueue, workflowId: `refresh-${randomUUID()}` });
}

/** Moves the test server's clock (the refresh's run time) to 01:00 UTC of the next business day; returns that day. */
async function skipToNextBusinessDay(): Promise<string> {
  const now = await env.currentTimeMs();
  const next = nextBusinessDay(businessDayOnOrAfter(new Date(now).toISOString().slice(0, 10), COUNTRY), COUNTRY);
  await env.sleep(Date.parse(`${next}T01:00:00Z`) - now);
  return next;
}

interface ProjectionRow {
  version: number;
  status: string;
  exception_reason: string | null;
  record: { status: string; ui_suggestion: { recommended_action: string; recommended_message: string } };
}

async function projection(id: string): Promise<ProjectionRow> {
  const { rows } = await pool.query<ProjectionRow>('SELECT version, status, exception_reason, record FROM dispatches WHERE id = $1', [id]);
  return rows[0];
}

const untilStatus = (id: string, status: string) =>
  until(async () => {
    const row = await projection(id);
    return row.status === status ? row : undefined;
  }, `dispatch ${id} to be ${status}`);

async function webhookEventTypes(id: string): Promise<string[]> {
  const { rows } = await pool.query<{ type: string }>('SELECT type FROM webhook_events WHERE dispatch_id = $1 ORDER BY created_at, type', [
    id,
  ]);
  return rows.map((row) => row.type);
}

async function signals(id: string, name: string): Promise<number> {
  const history = await env.client.workflow.getHandle(id).fetchHistory();
  return (history.events ?? []).filter((event) => event.workflowExecutionSignaledEventAttributes?.signalName === name).length;
}

const historyLength = async (id: string) => (await env.client.workflow.getHandle(id).describe()).historyLength;

/**
 * A dispatch made overdue by one refresh run; returns once its workflow has finished with it: the
 * event's effect recorded (the same activity writes the projection first, so the status alone is
 * not enough on a busy machine) and its history no longer growing.
 */
async function overdueDispatch(): Promise<string> {
  const id = await registerDispatchedDaysAgo(40);
  await refresh();
  await untilStatus(id, 'exception');
  await until(async () => {
    const { rows } = await pool.query("SELECT 1 FROM carrier_events WHERE dispatch_id = $1 AND effect = 'applied'", [id]);
    return rows.length === 1;
  }, `the overdue event of ${id} to be recorded applied`);
  let length = await historyLength(id);
  await until(async () => {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const now = await historyLength(id);
    const still = now === length;
    length = now;
    return still;
  }, `the history of ${id} to stop growing`);
  return id;
}

describe('overdue cards', () => {
  // First in the file, while the test server's clock is a day or so ahead at most: the window has
  // passed but is far from overdue. The next one too.
  it('re-estimates a card whose window has passed at most once per business day, even when its window changes again', async () => {
    // Early in a UTC day, so "an hour later" is still the same business day.
    const runDay = await skipToNextBusinessDay();
    // 10 business days before the run, counted in the calendar (not two weeks: around Christmas,
    // New Year or Easter that is as few as 8): its window (2 business days of history, a day more each
    // side as uncalibrated, plus the delay of 4 and its uncertainty of 2: at most 9) has passed by the
    // run's day, yet not 10 business days before it.
    const id = await registerDispatchedAt(`${businessDaysBefore(runDay, 10)}T10:00:00Z`, '5000');
    await setCarrierCondition(pool, { countryCode: COUNTRY, postalPrefix: '50', delayDays: 1, until: null });
    await refresh();
    expect(await signals(id, 'refreshPrediction')).toBe(1);
    // The window changes again within the same business day (a longer declared delay is less sure,
    // so the slid window widens): an hour later the refresh leaves it.
    await setCarrierCondition(pool, { countryCode: COUNTRY, postalPrefix: '50', delayDays: 4, until: null });
    await env.sleep('61 minutes');
    await refresh();
    expect(await signals(id, 'refreshPrediction')).toBe(1);
    // The next business day it is re-estimated once more.
    await skipToNextBusinessDay();
    await refresh();
    expect(await signals(id, 'refreshPrediction')).toBe(2);
    expect((await projection(id)).status).toBe('dispatched');
  });

  it('leaves in its status a card dispatched nine days ago, its window not yet 10 business days behind', async () => {
    const id = await registerDispatchedDaysAgo(9);
    await refresh();
    expect((await projection(id)).status).toBe('dispatched');
    expect(await signals(id, 'carrierEvent')).toBe(0);
  });

  it('puts a card not delivered 10 business days after its window in exception overdue, with status.updated and delivery.exception', async () => {
    const id = await registerDispatchedDaysAgo(40);
    const summary = await refresh();
    expect(summary.overdue).toBeGreaterThanOrEqual(1);
    const row = await untilStatus(id, 'exception');
    expect(row.exception_reason).toBe('overdue');
    expect(row.record.status).toBe('exception');
    expect(row.record.ui_suggestion.recommended_action).toBe('ContactSupport');
    expect(row.record.ui_suggestion.recommended_message).toContain('has not arrived within the expected time');
    const types = await until(async () => {
      const found = await webhookEventTypes(id);
      return found.includes('delivery.exception') ? found : undefined;
    }, 'the delivery.exception webhook event');
    expect(types.filter((type) => type === 'status.updated')).toHaveLength(1);
    expect(types.filter((type) => type === 'delivery.exception')).toHaveLength(1);
  });

  it('records the overdue transition in the carrier event log as an applied exception event', async () => {
    const id = await overdueDispatch();
    const { rows } = await pool.query('SELECT status, reason, event_id, dedupe_key, effect FROM carrier_events WHERE dispatch_id = $1', [
      id,
    ]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'exception', reason: 'overdue', effect: 'applied' });
    expect(rows[0].event_id).toMatch(/^overdue:\d{4}-\d{2}-\d{2}$/);
    expect(rows[0].dedupe_key).toBe(`id:${rows[0].event_id}`);
  });

  it('never signals an overdue card again: later runs, hours and days later, leave its history unchanged', async () => {
    const id = await overdueDispatch();
    const length = await historyLength(id);
    await env.sleep('2 hours');
    await refresh();
    await skipToNextBusinessDay();
    await refresh();
    expect(await historyLength(id)).toBe(length);
    expect(await signals(id, 'carrierEvent')).toBe(1);
    expect(await signals(id, 'refreshPrediction')).toBe(0);
  });

  it('makes an overdue card delivered when the carrier scans it delivered afterwards', async () => {
    const id = await overdueDispatch();
    await signalCarrierEvent(env.client, id, {
      status: 'delivered',
      occurred_at: new Date((await env.currentTimeMs()) + 60_000).toISOString(),
    });
    const row = await untilStatus(id, 'delivered');
    expect(row.exception_reason).toBeNull();
    expect(row.record.ui_suggestion.recommended_action).toBe('Activate');
  });
});
