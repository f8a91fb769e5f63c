// The retention sweep (docs/privacy.md "What is kept, and for how long"), started by the daily
// Schedule (worker/schedules.ts) and by `npm run admin -- retention run`. One activity does the
// work in bounded batches and heartbeats after each, so this workflow's history stays a handful of
// events however much is removed.
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { RetentionInput } from '../activities/retention.js';
import type { RetentionSummary } from '../temporal/contract.js';

// A lost worker is noticed within the heartbeat timeout; the retry resumes after the last batch.
const { applyRetention } = proxyActivities<Activities>({
  startToCloseTimeout: '6 hours',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 10 },
});

export async function retentionWorkflow(input: RetentionInput = {}): Promise<RetentionSummary> {
  return applyRetention(input);
}
