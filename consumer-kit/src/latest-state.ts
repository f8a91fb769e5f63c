// Arrival order is not guaranteed (docs/webhooks.md "Delivery and retry schedule"): keep, per dispatch, the status record of the
// event with the latest envelope `timestamp`, so a late, older event never overwrites a newer one.
// (Ordering by `dispatch_date` would not do: it is fixed per dispatch; the envelope
// timestamp is the per-event time.) On an equal timestamp the record already held stays.
import type { StatusRecord } from '../../domain/dispatch-schemas.js';
import type { WebhookEnvelope } from '../../domain/webhook-payload.js';

export interface LatestState {
  record: StatusRecord;
  /** The envelope timestamp the record came with. */
  timestamp: string;
}

/** True when `candidate` is strictly newer than `current` (or there is no current state). */
export function isNewer(candidate: Pick<WebhookEnvelope, 'timestamp'>, current: Pick<LatestState, 'timestamp'> | undefined): boolean {
  return current === undefined || Date.parse(candidate.timestamp) > Date.parse(current.timestamp);
}

export interface LatestStateStore {
  /**
   * Applies a card's event if newer than what is held; true when it became the latest state. A
   * `webhook_endpoint.disabled` event is about an endpoint, not a card: never applied (false).
   */
  apply(envelope: WebhookEnvelope): boolean;
  get(dispatchId: string): LatestState | undefined;
}

/** An in-memory store; for a database, use `isNewer`'s rule in the UPDATE's WHERE clause. */
export function createLatestStateStore(): LatestStateStore {
  const states = new Map<string, LatestState>();
  return {
    apply(envelope) {
      if (envelope.event === 'webhook_endpoint.disabled') return false;
      if (!isNewer(envelope, states.get(envelope.data.id))) return false;
      states.set(envelope.data.id, { record: envelope.data, timestamp: envelope.timestamp });
      return true;
    },
    get: (dispatchId) => states.get(dispatchId),
  };
}
