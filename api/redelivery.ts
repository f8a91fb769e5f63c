// Sending stored webhook deliveries again, outside any dispatch workflow: a redelivery workflow
// (workflows/redelivery.ts) runs the same delivery activity, signing and retry schedule for the
// given (event, endpoint) pairs. Shared by the operator CLI's `deliveries replay` and the
// dashboard (replay one event, replay a time range, send a test event).
import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { Pool } from '../db/pool.js';
import { resetDeliveriesForReplay, type ReplayFilter } from '../db/webhook-replay.js';
import { REDELIVERY_WORKFLOW_TYPE, type RedeliveryInput } from '../workflows/definitions.js';
import type { redeliveryWorkflow } from '../workflows/redelivery.js';

type Delivery = RedeliveryInput['deliveries'][number];

/** Starts a redelivery workflow for deliveries already pending in the database. */
export function startRedelivery(
  temporal: Client,
  taskQueue: string,
  deliveries: Delivery[],
): Promise<WorkflowHandle<typeof redeliveryWorkflow>> {
  return temporal.workflow.start<typeof redeliveryWorkflow>(REDELIVERY_WORKFLOW_TYPE, {
    workflowId: `redeliver-${randomUUID()}`,
    taskQueue,
    args: [{ deliveries } satisfies RedeliveryInput],
  });
}

/**
 * Resets the deliveries the filter matches to pending and starts their redelivery. Undefined when
 * nothing matches (no such delivery, or its endpoint is removed or disabled).
 */
export async function replayDeliveries(
  deps: { pool: Pool; temporal: Client; taskQueue: string },
  filter: ReplayFilter,
): Promise<{ deliveries: Delivery[]; handle: WorkflowHandle<typeof redeliveryWorkflow> } | undefined> {
  const deliveries = await resetDeliveriesForReplay(deps.pool, filter);
  if (deliveries.length === 0) return undefined;
  return { deliveries, handle: await startRedelivery(deps.temporal, deps.taskQueue, deliveries) };
}
