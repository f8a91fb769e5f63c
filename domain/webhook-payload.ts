// The webhook event envelope (docs/webhooks.md "Envelope"): its schema, and
// the one function that turns an event into the exact body bytes stored once and sent on every
// attempt. For a card's events `data` is the status record, validated by the same schema as
// GET /v1/status/{id}, so one parser serves polling and webhooks (the consumer kit imports it from
// here); for `webhook_endpoint.disabled` it is the endpoint that was disabled.
import { z } from 'zod';
import { statusRecord, type StatusRecord } from './dispatch-schemas.js';
import { isoTimestamp } from './field-schemas.js';
import { cardEventType, type WebhookEventType } from './vocabulary.js';

/**
 * The `data` of a `webhook_endpoint.disabled` webhook (docs/webhooks.md "Auto-disable"): the endpoint
 * that was disabled, not a status record. Its envelope is otherwise the same `{ event, timestamp, data }`.
 */
export const endpointDisabledData = z
  .object({
    id: z.string().meta({ description: 'the disabled endpoint (`whe_…`)' }),
    url: z.string(),
    disabled_reason: z.enum(['failing']).meta({ description: '`failing`: every attempt failed for WEBHOOK_AUTO_DISABLE_AFTER (5 days)' }),
    disabled_at: isoTimestamp,
  })
  .strict()
  .meta({ id: 'WebhookEndpointDisabledData' });
export type EndpointDisabledData = z.infer<typeof endpointDisabledData>;

export const cardWebhookEnvelope = z
  .object({
    event: cardEventType,
    timestamp: isoTimestamp,
    data: statusRecord,
  })
  .strict()
  .meta({ id: 'WebhookEvent' });
export type CardWebhookEnvelope = z.infer<typeof cardWebhookEnvelope>;

export const endpointDisabledEnvelope = z
  .object({
    event: z.literal('webhook_endpoint.disabled'),
    timestamp: isoTimestamp,
    data: endpointDisabledData,
  })
  .strict();
export type EndpointDisabledEnvelope = z.infer<typeof endpointDisabledEnvelope>;

/** Any body the service sends: narrow on `event` before reading `data`. */
export const webhookEnvelope = z.discriminatedUnion('event', [cardWebhookEnvelope, endpointDisabledEnvelope]);
export type WebhookEnvelope = z.infer<typeof webhookEnvelope>;

/** The envelope as the service serialises it: compact JSON, fields in the order event, timestamp, data. */
export function serialiseEnvelope(envelope: WebhookEnvelope): string {
  return JSON.stringify({ event: envelope.event, timestamp: envelope.timestamp, data: envelope.data });
}

export interface WebhookEventInput {
  /** A card's event type (the state machine's list; `webhook_endpoint.disabled` is built apart). */
  type: WebhookEventType;
  /** ISO 8601 timestamp fixed when the event is created. */
  timestamp: string;
  data: StatusRecord;
}

/**
 * The body as sent: compact JSON, fields in the order event, timestamp, data. Built once
 * per event; retries send the stored bytes, never a rebuild.
 */
export function buildWebhookBody(input: WebhookEventInput): string {
  return JSON.stringify({ event: input.type, timestamp: input.timestamp, data: input.data });
}

/**
 * The body of a `webhook_endpoint.disabled` event (docs/webhooks.md "Auto-disable"): the same envelope
 * `{ event, timestamp, data }` as a card's events, but `data` is the disabled endpoint
 * `{ id, url, disabled_reason, disabled_at }`, not a status record. Built once, sent byte for byte.
 */
export function buildEndpointDisabledBody(timestamp: string, data: EndpointDisabledData): string {
  return JSON.stringify({ event: 'webhook_endpoint.disabled', timestamp, data });
}
