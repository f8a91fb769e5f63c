// Redelivery of webhook events: an operator's or issuer's replay (`npm run admin -- deliveries
// replay`, the dashboard), a dashboard test event, and the reconciler's re-drive of orphaned
// pending deliveries. The same delivery activity, signing and schedule as the dispatch workflow; it
// is its own workflow so replaying works the same whether the dispatch's workflow is open or closed.
//
// A replay of any size (docs/webhooks.md "Replays"): the workflow holds a filter and a cursor, never the list.
// Each run loads one page of keys through an activity, drives it with at most MAX_IN_FLIGHT
// deliveries in flight (Temporal refuses a task with more than 2,000 pending activities), adds the
// page's outcomes to the replay's progress row, and continues as new with the next cursor. Each
// delivery is taken over (and, if settled, reset for a new cycle) by its own activity run, when it
// is about to be driven. The reconciler's runs (activities/redelivery.ts reconcileOrphanedDeliveries)
// pass a small batch of keys instead.
import { continueAsNew, log, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { DeliveryKey, RedeliveryInput, RedeliverySummary } from '../temporal/contract.js';
import { DELIVERY_ACTIVITY_OPTIONS } from './delivery-options.js';

const { deliverWebhook } = proxyActivities<Activities>(DELIVERY_ACTIVITY_OPTIONS);
const { loadReplayPage, recordReplayProgress } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});
const { reconcileOrphanedDeliveries } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
});

/** Deliveries in flight at once: well under Temporal's 2,000 pending activities per task. */
export const MAX_IN_FLIGHT = 50;
export const REPLAY_PAGE_SIZE = 500;

export async function redeliveryWorkflow(input: RedeliveryInput) {
  const driver = input.replayId;
  if (input.mode !== 'replay') {
    // A reconciler's batch is already claimed by it: it takes nothing over.
    const takeOver = input.mode === 'redeliver';
    return driveBounded(input.keys, (key) => deliverWebhook({ ...key, driver, takeOver }));
  }
  const totals: RedeliverySummary = { ...(input.totals ?? { delivered: 0, failed: 0, skipped: 0 }) };
  const page = await loadReplayPage({ filter: input.filter, after: input.cursor, limit: input.pageSize ?? REPLAY_PAGE_SIZE });
  const outcomes = await driveBounded(page.deliveries, (key) => deliverWebhook({ ...key, driver, takeOver: true }));
  const done = page.next === undefined;
  await recordReplayProgress({ replayId: driver, ...outcomes, done });
  add(totals, outcomes);
  log.info('replay page driven', { replayId: driver, deliveries: page.deliveries.length, ...totals, done });
  if (done) return totals;
  return continueAsNew<typeof redeliveryWorkflow>({ ...input, cursor: page.next, totals });
}

function add(totals: RedeliverySummary, page: RedeliverySummary): RedeliverySummary {
  totals.delivered += page.delivered;
  totals.failed += page.failed;
  totals.skipped += page.skipped;
  return totals;
}

/** Drives every key, at most MAX_IN_FLIGHT at a time, and counts the outcomes. */
async function driveBounded(keys: DeliveryKey[], deliver: (key: DeliveryKey) => Promise<{ outcome: string }>): Promise<RedeliverySummary> {
  const counts: RedeliverySummary = { delivered: 0, failed: 0, skipped: 0 };
  let next = 0;
  const lane = async () => {
    while (next < keys.length) {
      const key = keys[next++];
      const { outcome } = await deliver(key);
      if (outcome === 'delivered') counts.delivered += 1;
      else if (outcome === 'undeliverable') counts.failed += 1;
      else counts.skipped += 1;
    }
  };
  await Promise.all(Array.from({ length: Math.min(MAX_IN_FLIGHT, keys.length) }, lane));
  return counts;
}

/** The reconciler's Schedule runs this every few minutes (worker/schedules.ts). */
export async function reconcileDeliveriesWorkflow(input: { graceMs?: number } = {}) {
  return reconcileOrphanedDeliveries({ graceMs: input.graceMs ?? RECONCILE_GRACE_MS, batchSize: MAX_IN_FLIGHT, maxBatches: 20 });
}

/** A pending delivery its driver has not touched for this long past its due time has no running driver. */
export const RECONCILE_GRACE_MS = 5 * 60_000;
