// What the crash tests check of a dispatch's webhook deliveries, read as the dashboard reads them
// (db/delivery-log.ts): the state and attempts of each status.updated delivery.
import { listDispatchWebhookEvents } from '../../db/delivery-summaries.js';
import type { Pool } from '../../db/pool.js';
import { until } from './until.js';

export async function statusUpdatedDeliveries(pool: Pool, issuerId: string, dispatchId: string) {
  const events = await listDispatchWebhookEvents(pool, issuerId, dispatchId);
  return events
    .filter((event) => event.type === 'status.updated')
    .flatMap((event) => event.deliveries.map(({ state, attempts }) => ({ state, attempts })));
}

/** Waits until the first status.updated delivery is delivered; returns them all. */
export function untilDelivered(pool: Pool, issuerId: string, dispatchId: string) {
  return until(async () => {
    const deliveries = await statusUpdatedDeliveries(pool, issuerId, dispatchId);
    return deliveries[0]?.state === 'delivered' ? deliveries : undefined;
  }, 'the delivery to be recorded as delivered');
}
