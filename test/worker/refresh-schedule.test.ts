// The prediction refresh Schedule on the Temporal dev server (the time-skipping test server has no
// Schedules): the real worker entry point (`tsx worker/main.ts`) creates it at start with
// PREDICTION_REFRESH_INTERVAL, and it really runs the refresh. The worker has a database of its own,
// so a refresh every 2 s never touches the dispatches of other test files.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { setCarrierCondition } from '../../db/conditions.js';
import { createPool, type Pool } from '../../db/pool.js';
import { PREDICTION_REFRESH_WORKFLOW_TYPE, RECONCILE_DELIVERIES_WORKFLOW_TYPE, RETENTION_WORKFLOW_TYPE } from '../../temporal/contract.js';
import {
  deliveryReconcileScheduleId,
  ensurePredictionRefreshSchedule,
  predictionRefreshScheduleId,
  RECONCILE_EVERY_MS,
  RETENTION_EVERY_MS,
  retentionScheduleId,
} from '../../worker/schedules.js';
import { randomId, requireTestEnv, testLogger } from '../support/env.js';
import { startEntryPoint, type Started } from '../support/processes.js';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratch-database.js';
import { insertIssuer, registerDispatch, registration, seedTransitHistory } from '../support/workflow-env.js';

const taskQueue = randomId('refresh');
let database: ScratchDatabase;
let pool: Pool;
let connection: Connection;
let client: Client;
let worker: Started;

beforeAll(async () => {
  database = await createScratchDatabase('refresh_schedule', { migrate: true });
  pool = createPool(database.url, { applicationName: 'test-refresh-schedule' });
  connection = await Connection.connect({ address: requireTestEnv('TEST_TEMPORAL_ADDRESS') });
  client = new Client({ connection });
  worker = await startEntryPoint(
    'worker/main.ts',
    {
      DATABASE_URL: database.url,
      TEMPORAL_ADDRESS: requireTestEnv('TEST_TEMPORAL_ADDRESS'),
      TEMPORAL_TASK_QUEUE: taskQueue,
      PREDICTION_REFRESH_INTERVAL: '2s',
      LOG_LEVEL: 'info',
    },
    'worker started',
  );
}, 120_000);

afterAll(async () => {
  worker?.child.kill('SIGTERM');
  await worker?.exited;
  for (const id of [predictionRefreshScheduleId(taskQueue), deliveryReconcileScheduleId(taskQueue), retentionScheduleId(taskQueue)]) {
    await client?.schedule
      .getHandle(id)
      .delete()
      .catch(() => {});
  }
  await connection?.close();
  await pool?.end();
  await database?.drop();
});

async function eventually<T>(probe: () => Promise<T | undefined>, what: string, deadlineMs = 30_000): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('webhook delivery reconciler schedule', () => {
  it('is created at worker start, every 2 minutes on the task queue of the worker, skipping overlapping runs', async () => {
    expect(worker.output()).toContain('delivery reconcile schedule created');
    const description = await client.schedule.getHandle(deliveryReconcileScheduleId(taskQueue)).describe();
    expect(description.spec.intervals?.map((interval) => interval.every)).toEqual([RECONCILE_EVERY_MS]);
    expect(description.action).toMatchObject({ type: 'startWorkflow', workflowType: RECONCILE_DELIVERIES_WORKFLOW_TYPE, taskQueue });
    expect(description.policies.overlap).toBe('SKIP');
  });
});

describe('retention schedule', () => {
  it('is created at worker start, once a day on the task queue of the worker, skipping overlapping runs', async () => {
    expect(worker.output()).toContain('retention schedule created');
    const description = await client.schedule.getHandle(retentionScheduleId(taskQueue)).describe();
    expect(description.spec.intervals?.map((interval) => interval.every)).toEqual([RETENTION_EVERY_MS]);
    expect(RETENTION_EVERY_MS).toBe(86_400_000);
    expect(description.action).toMatchObject({ type: 'startWorkflow', workflowType: RETENTION_WORKFLOW_TYPE, taskQueue });
    expect(description.policies.overlap).toBe('SKIP');
  });
});

describe('prediction refresh schedule', () => {
  it('is created at worker start with the PREDICTION_REFRESH_INTERVAL interval, skipping overlapping runs', async () => {
    expect(worker.output()).toContain('prediction refresh schedule created');
    const description = await client.schedule.getHandle(predictionRefreshScheduleId(taskQueue)).describe();
    expect(description.spec.intervals?.map((interval) => interval.every)).toEqual([2000]);
    expect(description.action).toMatchObject({ type: 'startWorkflow', workflowType: PREDICTION_REFRESH_WORKFLOW_TYPE, taskQueue });
    expect(description.policies.overlap).toBe('SKIP');
  });

  it('runs the refresh by itself: a dispatch whose window changed gets a new version and delivery.predicted', async () => {
    const issuerId = await insertIssuer(pool);
    await seedTransitHistory(pool, 'SI', ['1000']);
    const reg = registration(issuerId, {
      dispatchDate: new Date().toISOString(),
      destination: { postal_code: '1000', country_code: 'SI' },
    });
    await registerDispatch(client, taskQueue, reg);
    await setCarrierCondition(pool, { countryCode: 'SI', postalPrefix: null, delayDays: 3, until: null });
    const event = await eventually(async () => {
      const { rows } = await pool.query(
        "SELECT d.version FROM dispatches d JOIN webhook_events e ON e.dispatch_id = d.id AND e.idempotency_key = d.id || ':2:delivery.predicted' WHERE d.id = $1", // prettier-ignore
        [reg.id],
      );
      return rows[0] as { version: number } | undefined;
    }, 'the scheduled refresh to update the dispatch');
    expect(event.version).toBe(2);
    const description = await client.schedule.getHandle(predictionRefreshScheduleId(taskQueue)).describe();
    expect(description.info.recentActions.length).toBeGreaterThan(0);
  });
});

describe('making sure of the schedule at every worker start', () => {
  it('creates it once, leaves it unchanged at the same interval, and updates it when the interval differs', async () => {
    const otherQueue = randomId('refresh-idempotent');
    const options = { taskQueue: otherQueue, logger: testLogger('schedule') };
    try {
      expect(await ensurePredictionRefreshSchedule(client, { ...options, intervalMs: 3_600_000 })).toBe('created');
      expect(await ensurePredictionRefreshSchedule(client, { ...options, intervalMs: 3_600_000 })).toBe('unchanged');
      expect(await ensurePredictionRefreshSchedule(client, { ...options, intervalMs: 900_000 })).toBe('updated');
      const description = await client.schedule.getHandle(predictionRefreshScheduleId(otherQueue)).describe();
      expect(description.spec.intervals?.map((interval) => interval.every)).toEqual([900_000]);
    } finally {
      await client.schedule.getHandle(predictionRefreshScheduleId(otherQueue)).delete();
    }
  });
});
