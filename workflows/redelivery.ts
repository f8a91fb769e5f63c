// Redelivery of webhook events an operator asked to replay (`npm run admin -- deliveries replay`):
// the same delivery activity, on the same schedule, for deliveries reset to pending. It is its own
// small workflow so replaying works the same whether the dispatch's workflow is open or closed.
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { RedeliveryInput } from './definitions.js';
import { DELIVERY_ACTIVITY_OPTIONS } from './delivery-options.js';

const { deliverWebhook } = proxyActivities<Activities>(DELIVERY_ACTIVITY_OPTIONS);

export async function redeliveryWorkflow(input: RedeliveryInput) {
  const results = await Promise.all(input.deliveries.map((delivery) => deliverWebhook(delivery)));
  return input.deliveries.map((delivery, i) => ({ ...delivery, ...results[i] }));
}
