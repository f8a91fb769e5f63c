// The Temporal Schedule of the prediction refresh (docs/predictions.md "Refresh"), made sure of at
// every worker start (worker/main.ts and `npm start`): created when missing, its interval updated
// when PREDICTION_REFRESH_INTERVAL changed, left alone otherwise. Several workers starting at once
// agree: the second create fails as already running and finds the interval already set.
// Also the Schedule of the webhook delivery reconciler (docs/webhooks.md "One driver per pending delivery"), every RECONCILE_EVERY_MS,
// and the daily retention sweep's (docs/privacy.md "What is kept, and for how long").
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { PREDICTION_REFRESH_WORKFLOW_TYPE, RECONCILE_DELIVERIES_WORKFLOW_TYPE, RETENTION_WORKFLOW_TYPE } from '../temporal/contract.js';

/**
 * One Schedule per task queue: each deployment sharing a namespace (its own task queue and
 * database) refreshes its own dispatches.
 */
export function predictionRefreshScheduleId(taskQueue: string): string {
  return `prediction-refresh-${taskQueue}`;
}

export type ScheduleOutcome = 'created' | 'updated' | 'unchanged';

export async function ensurePredictionRefreshSchedule(
  client: Client,
  options: { taskQueue: string; intervalMs: number; logger: Logger },
): Promise<ScheduleOutcome> {
  const scheduleId = predictionRefreshScheduleId(options.taskQueue);
  const spec = { intervals: [{ every: options.intervalMs }] };
  let outcome: ScheduleOutcome = 'created';
  try {
    await client.schedule.create({
      scheduleId,
      spec,
      action: {
        type: 'startWorkflow',
        workflowType: PREDICTION_REFRESH_WORKFLOW_TYPE,
        workflowId: scheduleId,
        taskQueue: options.taskQueue,
        args: [],
      },
      policies: {
        // A refresh still running when the next is due makes the next one pointless: skip it.
        overlap: ScheduleOverlapPolicy.SKIP,
        // After an outage one refresh catches up; the missed ones would find nothing new.
        catchupWindow: '1 minute',
      },
    });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    const handle = client.schedule.getHandle(scheduleId);
    const current = await handle.describe();
    const intervals = current.spec.intervals ?? [];
    if (intervals.length === 1 && intervals[0].every === options.intervalMs && !current.spec.calendars?.length) {
      outcome = 'unchanged';
    } else {
      await handle.update((previous) => ({ ...previous, spec }));
      outcome = 'updated';
    }
  }
  options.logger.info({ scheduleId, intervalMs: options.intervalMs, outcome }, `prediction refresh schedule ${outcome}`);
  return outcome;
}

export function deliveryReconcileScheduleId(taskQueue: string): string {
  return `reconcile-deliveries-${taskQueue}`;
}

/** How often the reconciler looks for pending deliveries without a running driver. */
export const RECONCILE_EVERY_MS = 2 * 60_000;

/**
 * The webhook delivery reconciler's Schedule (docs/webhooks.md): every 2 minutes a
 * reconcileDeliveriesWorkflow re-drives the pending deliveries that have had no running driver for
 * more than 5 minutes. Created when missing; one per task queue, like the refresh.
 */
export async function ensureDeliveryReconcileSchedule(
  client: Client,
  options: { taskQueue: string; logger: Logger },
): Promise<'created' | 'unchanged'> {
  const scheduleId = deliveryReconcileScheduleId(options.taskQueue);
  let outcome: 'created' | 'unchanged' = 'created';
  try {
    await client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: RECONCILE_EVERY_MS }] },
      action: {
        type: 'startWorkflow',
        workflowType: RECONCILE_DELIVERIES_WORKFLOW_TYPE,
        workflowId: scheduleId,
        taskQueue: options.taskQueue,
        args: [{}],
      },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
    });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    outcome = 'unchanged';
  }
  options.logger.info({ scheduleId, outcome }, `delivery reconcile schedule ${outcome}`);
  return outcome;
}

export function retentionScheduleId(taskQueue: string): string {
  return `retention-${taskQueue}`;
}

/** How often the retention sweep runs (docs/privacy.md "What is kept, and for how long"). */
export const RETENTION_EVERY_MS = 24 * 3_600_000;

/**
 * The retention sweep's Schedule (workflows/retention.ts): once a day it applies the RETENTION_*
 * windows of the workers of this task queue. Created when missing; one per task queue, like the refresh.
 */
export async function ensureRetentionSchedule(
  client: Client,
  options: { taskQueue: string; logger: Logger },
): Promise<'created' | 'unchanged'> {
  const scheduleId = retentionScheduleId(options.taskQueue);
  let outcome: 'created' | 'unchanged' = 'created';
  try {
    await client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: RETENTION_EVERY_MS }] },
      action: {
        type: 'startWorkflow',
        workflowType: RETENTION_WORKFLOW_TYPE,
        workflowId: scheduleId,
        taskQueue: options.taskQueue,
        args: [{}],
      },
      // A sweep still running a day later is finishing a backlog: the next one would only wait for it.
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
    });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    outcome = 'unchanged';
  }
  options.logger.info({ scheduleId, outcome }, `retention schedule ${outcome}`);
  return outcome;
}
