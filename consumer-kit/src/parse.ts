// Parsing a verified webhook body into a typed envelope, with the very schema the service uses for
// GET /v1/status/{id} (`statusRecord`), so one parser serves polling and webhooks (docs/webhooks.md "Envelope").
import { statusRecord, type StatusRecord } from '../../domain/dispatch-schemas.js';
import {
  webhookEnvelope,
  type CardWebhookEnvelope,
  type EndpointDisabledEnvelope,
  type WebhookEnvelope,
} from '../../domain/webhook-payload.js';
import { rawBytes } from './headers.js';
import type { RawBody } from './verify.js';

export { statusRecord, webhookEnvelope };
export type { CardWebhookEnvelope, EndpointDisabledEnvelope, StatusRecord, WebhookEnvelope };

export class WebhookParseError extends Error {}

/**
 * Parses the raw body (after `verify`): throws WebhookParseError naming the first bad field. Narrow
 * on `event`: a card's events carry its status record, `webhook_endpoint.disabled` the endpoint.
 */
export function parse(rawBody: RawBody): WebhookEnvelope {
  let json: unknown;
  try {
    json = JSON.parse(rawBytes(rawBody).toString('utf8'));
  } catch {
    throw new WebhookParseError('body is not JSON');
  }
  const parsed = webhookEnvelope.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new WebhookParseError(`${issue.path.join('.') || 'body'}: ${issue.message}`);
  }
  return parsed.data;
}

/** Whether the consumer should prompt the cardholder to activate the card (docs/webhooks.md "Envelope"). */
export function shouldPromptActivation(record: StatusRecord): boolean {
  return record.status === 'delivered' || record.ui_suggestion.recommended_action === 'Activate';
}
