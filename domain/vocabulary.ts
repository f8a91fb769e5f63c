// The service's vocabulary: every list of names the wire, the tables, the logs and the docs share —
// a dispatch's statuses, its confidence levels and recommended actions, the exception reasons, what a
// carrier event did (its effect) and the webhook event types. One copy each: the types, the zod
// enums, the OpenAPI document (api/openapi.ts), the dashboard's and the CLI's lists read them here,
// and test/docs/vocabulary.unit.test.ts keeps docs/states.md and docs/webhooks.md naming the same.
import { z } from 'zod';

export const DISPATCH_STATUSES = ['dispatched', 'in_transit', 'out_for_delivery', 'delivered', 'exception'] as const;
export const dispatchStatus = z.enum(DISPATCH_STATUSES).meta({ id: 'DispatchStatus' });
export type DispatchStatus = z.infer<typeof dispatchStatus>;

export const CONFIDENCE_LEVELS = ['High', 'Medium', 'Low'] as const;
export const confidenceLevel = z.enum(CONFIDENCE_LEVELS);
export type ConfidenceLevel = z.infer<typeof confidenceLevel>;

export const RECOMMENDED_ACTIONS = ['None', 'Activate', 'ContactSupport'] as const;
export const recommendedAction = z.enum(RECOMMENDED_ACTIONS);
export type RecommendedAction = z.infer<typeof recommendedAction>;

/** The reasons a carrier may give for an exception (`reason` of a carrier event). */
export const EXCEPTION_REASONS = ['failed_attempt', 'postal_delay', 'address_issue', 'damaged', 'lost', 'returned', 'other'] as const;
export const exceptionReason = z.enum(EXCEPTION_REASONS);
/** Reasons the service decides itself (docs/states.md "Overdue"); a carrier cannot send them. */
export const SERVICE_EXCEPTION_REASONS = ['overdue'] as const;
/** Every reason a dispatch in exception can hold: the carrier's and the service's. */
export const anyExceptionReason = z.enum([...EXCEPTION_REASONS, ...SERVICE_EXCEPTION_REASONS]);
export type ExceptionReason = z.infer<typeof anyExceptionReason>;

/**
 * What a carrier event did (docs/states.md "What an event does: effects"): `applied` changed the
 * status; `exception_repeated` kept the card in exception but is a new exception; `stale`,
 * `backward`, `unchanged` and `after_delivery` changed nothing (the event still joins the set).
 * Set outside the state machine: `workflow_closed` (the dispatch's workflow had closed undelivered,
 * the API answered 409) and `rejected` (the projection refused the change for good).
 */
export const EVENT_EFFECTS = [
  'applied',
  'exception_repeated',
  'stale',
  'backward',
  'unchanged',
  'after_delivery',
  'workflow_closed',
  'rejected',
] as const;
export const eventEffect = z.enum(EVENT_EFFECTS);
export type EventEffect = z.infer<typeof eventEffect>;

/** The webhook event types an endpoint subscribes to (docs/webhooks.md "Envelope"). */
export const WEBHOOK_EVENT_TYPES = [
  'status.updated',
  'delivery.predicted',
  'delivery.completed',
  'delivery.exception',
  // Not about a card: another endpoint of the issuer was auto-disabled (docs/webhooks.md "Auto-disable").
  'webhook_endpoint.disabled',
] as const;
export const webhookEventType = z.enum(WEBHOOK_EVENT_TYPES);
export type WebhookEventType = z.infer<typeof webhookEventType>;
/** The events about a card, whose `data` is its status record. */
export const cardEventType = webhookEventType.exclude(['webhook_endpoint.disabled']);
export type CardEventType = z.infer<typeof cardEventType>;

/**
 * Why the prediction model did not learn from a live delivery (docs/predictions.md "History and its
 * bounds"; db/transit-history.ts): registered more than 3 days after its dispatch date, its delivered
 * event received more than 3 days after it occurred, delivered before its dispatch date, or a
 * transit beyond the country's plausible bound. A delivery may have several. The published accuracy
 * counts these deliveries all the same (docs/prediction-quality.md "What the model did not learn from").
 */
export const NOT_LEARNED_REASONS = ['late_registration', 'late_report', 'delivered_before_dispatch', 'implausible'] as const;
export const notLearnedReason = z.enum(NOT_LEARNED_REASONS);
export type NotLearnedReason = z.infer<typeof notLearnedReason>;
