// The hand-off of a change's new deliveries to their first attempt in the same worker: the change's
// write (activities/projection.ts, db/dispatch-changes.ts) creates them claimed by the dispatch's
// driver with what the attempt needs, and deliverWebhooks (activities/webhook-delivery.ts) takes it
// instead of claiming (docs/webhooks.md "One driver per pending delivery").
import type { DeliveryToSend } from '../db/webhooks.js';

/** How long a handed-over delivery may wait for its first attempt before it is read again instead. */
const HAND_OFF_MAX_AGE_MS = 5_000;

/**
 * Deliveries a change's write created and handed to their first attempt in this worker
 * (activities/projection.ts → deliverWebhooks): born claimed by the dispatch's driver, with what the
 * attempt needs read in the write's own transaction (db/dispatch-changes.ts), so the first attempt
 * sends without a claim statement. Taken once; one the attempt did not take within
 * HAND_OFF_MAX_AGE_MS (another worker ran it, or a backlog) is dropped, and a run without it claims
 * as any other. An endpoint changed in between is what the claim-then-POST order allowed already.
 */
export class HandedDeliveries {
  private readonly held = new Map<string, { at: number; driver: string; delivery: DeliveryToSend }>();

  constructor(private readonly now: () => number = Date.now) {}

  put(driver: string, delivery: DeliveryToSend): void {
    const at = this.now();
    for (const [key, entry] of this.held) {
      if (at - entry.at < HAND_OFF_MAX_AGE_MS) break;
      this.held.delete(key);
    }
    this.held.set(`${delivery.eventId} ${delivery.endpoint.id}`, { at, driver, delivery });
  }

  take(eventId: string, endpointId: string, driver: string): DeliveryToSend | undefined {
    const key = `${eventId} ${endpointId}`;
    const entry = this.held.get(key);
    if (!entry) return undefined;
    this.held.delete(key);
    return entry.driver === driver && this.now() - entry.at < HAND_OFF_MAX_AGE_MS ? entry.delivery : undefined;
  }
}
