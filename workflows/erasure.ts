// The erasure of one dispatch (docs/http-contract.md "Erasure"), started by DELETE /v1/dispatches/{id} and
// the operator CLI's `dispatch erase` / `issuer erase`, as workflow `erasure-<erasureId>`: durable, so
// a worker or API crash midway resumes where it stopped. The order matters: the dispatch's Temporal
// runs first (terminated and deleted, so no run writes the projection again), a short wait for the
// activities those runs had already started, then every Postgres row naming the dispatch in one
// transaction, then a last sweep of runs (a carrier event's restart that slipped in), then the
// erasure's record. Each step is idempotent, so a retried activity does no harm.
import { ApplicationFailure, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { ErasureInput, ErasureSummary } from '../temporal/contract.js';

const { eraseWorkflowRuns, eraseRows, recordErasure } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
});
const { recordErasureFailed } = proxyActivities<Activities>({ startToCloseTimeout: '1 minute' });

export async function erasureWorkflow(input: ErasureInput): Promise<ErasureSummary> {
  try {
    let workflowRuns = await eraseWorkflowRuns(input.dispatchId);
    await sleep(input.settleMs);
    const { rows } = await eraseRows([input.dispatchId]);
    workflowRuns += await eraseWorkflowRuns(input.dispatchId);
    const summary = { rows, workflowRuns };
    await recordErasure(input.erasureId, summary);
    return summary;
  } catch (error) {
    // Out of retries: the erasure says failed (a second request starts it again), and the run fails.
    await recordErasureFailed(input.erasureId);
    throw ApplicationFailure.nonRetryable(`erasure ${input.erasureId} failed: ${(error as Error).message}`);
  }
}
