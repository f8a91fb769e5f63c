// The activities of the redelivery workflows (workflows/redelivery.ts; docs/webhooks.md "Replays"
// and "One driver per pending delivery"): a replay's pages of deliveries and its progress, and the
// reconciler that re-drives pending deliveries nobody drives. Each delivery itself is driven by
// activities/webhook-delivery.ts deliverWebhook.
import { randomUUID } from 'node:crypto';
import { Context, log } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Pool } from '../db/pool.js';
import { addReplayProgress, failReplay, loadReplayPage, runningReplays } from '../db/webhook-replays.js';
import type { ReplayCursor, ReplayFilterInput } from '../domain/webhook-event-schemas.js';
import { claimOrphanedDeliveries } from '../db/webhooks.js';
import { replayWorkflowEnd, startRedelivery } from '../temporal/client.js';

export function createRedeliveryActivities(deps: { pool: Pool; temporal?: Client }) {
  return {
    /** One page of a replay's matching deliveries (keys only: the workflow never holds the whole list). */
    async loadReplayPage(input: { filter: ReplayFilterInput; after?: ReplayCursor; limit: number }) {
      return loadReplayPage(deps.pool, input);
    },

    /**
     * Adds a page's outcomes to the replay's progress row (webhook_replays), once: the page is named
     * by the workflow run that drove it (one run per page), so a retry of this activity adds nothing.
     */
    async recordReplayProgress(input: { replayId: string; delivered: number; failed: number; skipped: number; done: boolean }) {
      const run = Context.current().info.workflowExecution?.runId ?? randomUUID();
      await addReplayProgress(deps.pool, input.replayId, { ...input, run });
    },

    async failReplay(input: { replayId: string }) {
      await failReplay(deps.pool, input.replayId);
    },

    /**
     * The reconciler (docs/webhooks.md): claims pending deliveries with no running driver (overdue by
     * more than `graceMs`) in batches of `batchSize` and starts a redelivery workflow for each batch,
     * driving all of it at once. A batch whose start fails keeps its claim only for the run budget;
     * the next reconcile finds it again. First, it marks failed the running replays whose workflow
     * closed without completing (failClosedReplays).
     */
    async reconcileOrphanedDeliveries(input: { graceMs: number; batchSize: number; maxBatches: number }): Promise<{ redriven: number }> {
      if (!deps.temporal) throw new Error('the reconciler needs a Temporal client');
      await failClosedReplays(deps.pool, deps.temporal, input.graceMs);
      const { taskQueue } = Context.current().info;
      let redriven = 0;
      for (let batch = 0; batch < input.maxBatches; batch += 1) {
        const token = `reconcile-${randomUUID()}`;
        const deliveries = await claimOrphanedDeliveries(deps.pool, { driver: token, graceMs: input.graceMs, limit: input.batchSize });
        if (deliveries.length === 0) break;
        await startRedelivery(deps.temporal, taskQueue, deliveries, { workflowId: token, takeOver: false });
        log.warn('pending webhook deliveries without a running driver re-driven', { workflowId: token, count: deliveries.length });
        redriven += deliveries.length;
        Context.current().heartbeat();
      }
      return { redriven };
    },
  };
}

/** Running replays looked at per reconcile, oldest first. */
const REPLAYS_CHECKED = 100;

/**
 * A replay whose workflow was terminated, cancelled, failed or timed out never records its last
 * page, and its progress row would say `running` forever (GET /v1/replays/{id}, the dashboard):
 * such a replay is marked `failed`, as is one whose workflow Temporal does not know `graceMs` after
 * it was created (its request died between the row and the start). A workflow's end is read from
 * Temporal here rather than handled inside it: a terminated workflow runs no more code.
 */
async function failClosedReplays(pool: Pool, temporal: Client, graceMs: number): Promise<void> {
  for (const replay of await runningReplays(pool, { graceMs, limit: REPLAYS_CHECKED })) {
    const end = await replayWorkflowEnd(temporal, replay.id);
    if (end === 'ended' || (end === 'unknown' && replay.overdue)) {
      await failReplay(pool, replay.id);
      log.warn('replay marked failed: its workflow closed without completing', { replayId: replay.id, workflow: end });
    }
  }
  Context.current().heartbeat();
}

export type RedeliveryActivities = ReturnType<typeof createRedeliveryActivities>;
