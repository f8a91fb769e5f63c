// Sending stored webhook deliveries again, outside any dispatch workflow: a redelivery workflow
// (workflows/redelivery.ts) runs the same delivery activity, signing and retry schedule. Shared by
// the operator CLI's `deliveries replay` and the dashboard (replay one event, replay a time range,
// send a test event).
//
// Nothing is reset before the workflow has started: a replay only records its progress row and
// starts the workflow, which takes each delivery over when it is about to drive it (a waiting
// retry goes on from its last attempt number; a settled delivery starts a new cycle at attempt 1).
import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { Pool } from '../db/pool.js';
import { countReplayMatches, createReplay, failReplay, toFilterInput, type ReplayFilter } from '../db/webhook-replay.js';
import { REDELIVERY_WORKFLOW_TYPE, type DeliveryKey, type RedeliveryInput } from '../workflows/definitions.js';
import type { redeliveryWorkflow } from '../workflows/redelivery.js';

/** Drives a few known deliveries now (a dashboard test event), taking them over from any other driver. */
export function startRedelivery(
  temporal: Client,
  taskQueue: string,
  deliveries: DeliveryKey[],
): Promise<WorkflowHandle<typeof redeliveryWorkflow>> {
  const workflowId = `redeliver-${randomUUID()}`;
  return temporal.workflow.start<typeof redeliveryWorkflow>(REDELIVERY_WORKFLOW_TYPE, {
    workflowId,
    taskQueue,
    args: [{ replayId: workflowId, keys: deliveries, takeOver: true } satisfies RedeliveryInput],
  });
}

export interface StartedReplay {
  /** The replay's id: its progress row (db/webhook-replay.ts getReplay) and its workflow id. */
  id: string;
  /** Deliveries the filter matched at the start. */
  total: number;
  handle: WorkflowHandle<typeof redeliveryWorkflow>;
}

/**
 * Starts a paged replay of the deliveries the filter matches. Undefined when nothing matches (no
 * such delivery, or its endpoint is removed or disabled). When the workflow cannot be started the
 * progress row is marked failed and the error is thrown; no delivery has been touched.
 */
export async function replayDeliveries(
  deps: { pool: Pool; temporal: Client; taskQueue: string },
  filter: ReplayFilter,
  options: { pageSize?: number } = {},
): Promise<StartedReplay | undefined> {
  const total = await countReplayMatches(deps.pool, filter);
  if (total === 0) return undefined;
  const id = `replay-${randomUUID()}`;
  await createReplay(deps.pool, { id, filter, total });
  try {
    const handle = await deps.temporal.workflow.start<typeof redeliveryWorkflow>(REDELIVERY_WORKFLOW_TYPE, {
      workflowId: id,
      taskQueue: deps.taskQueue,
      args: [
        {
          replayId: id,
          filter: toFilterInput(filter),
          takeOver: true,
          progress: true,
          ...(options.pageSize ? { pageSize: options.pageSize } : {}),
        } satisfies RedeliveryInput,
      ],
    });
    return { id, total, handle };
  } catch (error) {
    await failReplay(deps.pool, id);
    throw error;
  }
}
