// How the workflows run the webhook delivery activity (activities/webhook-delivery.ts), shared by the
// dispatch workflow and the redelivery workflow so a replayed event is delivered exactly as the
// original was.
import type { ActivityOptions } from '@temporalio/workflow';

export const DELIVERY_ACTIVITY_OPTIONS: ActivityOptions = {
  // The activity owns the schedule (docs/webhooks.md "Delivery and retry schedule": 1m, 5m, 30m, 2h, 8h through nextRetryDelay) and returns
  // `undeliverable` after the last retry, so attempts are unlimited here; this policy only paces
  // runs that failed outside an HTTP attempt (database down, worker gone).
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
  startToCloseTimeout: '1 minute',
  // A run that heartbeats no more (its worker died mid-attempt) is retried after 10 s; the activity
  // heartbeats every 2 s while an HTTP attempt is in flight.
  heartbeatTimeout: '10 seconds',
};
