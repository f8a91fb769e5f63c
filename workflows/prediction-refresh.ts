// The bulk prediction refresh, started by the hourly Schedule (worker/schedules.ts). One activity
// does the work and signals the dispatches whose prediction changed, so this workflow's history
// stays a handful of events however many dispatches there are.
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { PredictionRefreshSummary } from '../temporal/contract.js';

// The activity heartbeats after every page and every batch of signals: a lost worker is noticed
// within the heartbeat timeout, and the retry resumes after the last finished page.
const { refreshPredictions } = proxyActivities<Activities>({
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 5 },
});

export async function predictionRefreshWorkflow(): Promise<PredictionRefreshSummary> {
  // The run's own start time: the same on every retry of the activity, so a retry recognises the
  // claims it made (db/predictions.ts).
  return refreshPredictions({ runAt: new Date(workflowInfo().runStartTime.getTime()).toISOString() });
}
