// Step 4 of a carrier event's path (HTTP → workflow → projection → webhook): what a projected change
// fires. The projection activity (activities/projection.ts, step 3) asks this module which webhook
// events a new version creates, stores them, and the dispatch workflow hands each delivery to
// activities/webhook-delivery.ts (step 5), which POSTs it.
//
// The rule: the events the state machine's transition fired (domain/state-machine.ts), in its order,
// then `delivery.predicted` when the window or its confidence changed (the first prediction, at
// registration, counts as a change). Each event is keyed `<dispatchId>:<version>:<type>`, so a
// retried write finds the events its first run made instead of making them twice, and all carry
// the one timestamp the write fixed. Pure: no clock, no database.
import type { Prediction } from './prediction.js';
import type { EndpointDisabledData, StatusRecord } from './schemas.js';
import type { WebhookEventType } from './state-machine.js';

/** A webhook event to create: its body is `{ type, timestamp, data }` (domain/webhook-payload.ts). */
export interface FiredWebhookEvent {
  type: WebhookEventType;
  /** ISO 8601, fixed by the write and identical for every event of the version. */
  timestamp: string;
  data: StatusRecord;
  /** `<dispatchId>:<version>:<type>`. */
  idempotencyKey: string;
}

export interface ChangeToProject {
  dispatchId: string;
  version: number;
  /** Webhook events the transition fired; absent for a write that only re-predicts. */
  transitionEvents?: readonly WebhookEventType[];
  /** The prediction of the previous version; absent at registration. */
  previousPrediction?: Prediction;
  prediction: Prediction;
  /** The version's status record: every event's `data`. */
  record: StatusRecord;
  timestamp: string;
}

/** The webhook events this version of the dispatch fires, in the order they are created. */
export function webhookEventsFired(change: ChangeToProject): FiredWebhookEvent[] {
  const types = [...(change.transitionEvents ?? [])];
  if (predictionChanged(change.previousPrediction, change.prediction)) types.push('delivery.predicted');
  return types.map((type) => ({
    type,
    timestamp: change.timestamp,
    data: change.record,
    idempotencyKey: webhookEventKey(change.dispatchId, change.version, type),
  }));
}

/** The idempotency key of a dispatch version's event of one type. */
export function webhookEventKey(dispatchId: string, version: number, type: WebhookEventType): string {
  return `${dispatchId}:${version}:${type}`;
}

/** A new or revised window or confidence; the first prediction (at registration) counts as new. */
export function predictionChanged(previous: Prediction | undefined, next: Prediction): boolean {
  return (
    previous === undefined ||
    previous.window.min !== next.window.min ||
    previous.window.max !== next.window.max ||
    previous.confidence !== next.confidence
  );
}

/**
 * The body of a `webhook_endpoint.disabled` event (docs/webhooks.md "Auto-disable"): the same envelope
 * `{ event, timestamp, data }` as a card's events, but `data` is the disabled endpoint
 * `{ id, url, disabled_reason, disabled_at }`, not a status record. Built once, sent byte for byte.
 */
export function buildEndpointDisabledBody(timestamp: string, data: EndpointDisabledData): string {
  return JSON.stringify({ event: 'webhook_endpoint.disabled', timestamp, data });
}
