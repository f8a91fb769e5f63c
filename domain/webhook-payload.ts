// The webhook event envelope (spec "Webhook event envelope", docs/webhooks.md): its schema, and
// the one function that turns an event into the exact body bytes stored once and sent on every
// attempt. `data` is the status record, validated by the same schema as GET /v1/status/{id}, so
// one parser serves polling and webhooks (the consumer kit imports it from here).
import { z } from 'zod';
import { isoTimestamp, statusRecord, type StatusRecord } from './schemas.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './state-machine.js';

export const webhookEventType = z.enum(WEBHOOK_EVENT_TYPES);

export const webhookEnvelope = z
  .object({
    event: webhookEventType,
    timestamp: isoTimestamp,
    data: statusRecord,
  })
  .strict()
  .meta({ id: 'WebhookEvent' });
export type WebhookEnvelope = z.infer<typeof webhookEnvelope>;

export interface WebhookEventInput {
  type: WebhookEventType;
  /** ISO 8601 timestamp fixed when the event is created. */
  timestamp: string;
  data: StatusRecord;
}

/**
 * The body as sent: compact JSON, fields in the spec's order (event, timestamp, data). Built once
 * per event; retries send the stored bytes, never a rebuild.
 */
export function buildWebhookBody(input: WebhookEventInput): string {
  const envelope: WebhookEnvelope = { event: input.type, timestamp: input.timestamp, data: input.data };
  return JSON.stringify(envelope);
}
