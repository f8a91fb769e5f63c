// The OpenAPI 3.1 `webhooks` object of the document (api/openapi.ts): the requests the service sends
// to a webhook endpoint, one per event type it fires (domain/vocabulary.ts WEBHOOK_EVENT_TYPES),
// each with the envelope `{ event, timestamp, data }` (domain/webhook-payload.ts; `data` the status
// record, or the endpoint for `webhook_endpoint.disabled`) and the headers domain/signing.ts signs
// it with (docs/webhooks.md "Signing").
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject } from 'zod-openapi';
import { z } from 'zod';
import { statusRecord } from '../domain/dispatch-schemas.js';
import { isoTimestamp } from '../domain/field-schemas.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../domain/vocabulary.js';
import { endpointDisabledData } from '../domain/webhook-payload.js';

const WHEN: Record<WebhookEventType, string> = {
  'status.updated': 'the dispatch moved to another state',
  'delivery.predicted': 'the delivery window or its confidence level changed, the first prediction at registration included',
  'delivery.completed': 'the card was delivered',
  'delivery.exception': 'the dispatch entered the `exception` state, or reported a new exception while in it (failed attempt, returned, …)',
  'webhook_endpoint.disabled':
    'another endpoint of the issuer was disabled because every attempt failed for WEBHOOK_AUTO_DISABLE_AFTER (5 days by default)',
};

const signatureHeaders = z.object({
  'X-Service-Signature': z.string().meta({
    description: "lowercase hex HMAC-SHA256 of the exact body bytes, keyed with the endpoint secret's UTF-8 bytes",
    example: '5d41402abc4b2a76b9719d911017c592aa5d41402abc4b2a76b9719d911017c5',
  }),
  'X-Service-Event-Id': z
    .string()
    .meta({ description: 'the webhook event id: the same on every retry and replay', example: 'evt_8HqT2mZp7TxA1c4k' }),
  'X-Service-Delivery-Attempt': z
    .string()
    .regex(/^[1-6]$/)
    .meta({ description: 'attempt number within this delivery cycle, 1 to 6', example: '1' }),
  'webhook-id': z
    .string()
    .meta({ description: 'Standard Webhooks: the webhook event id (as X-Service-Event-Id)', example: 'evt_8HqT2mZp7TxA1c4k' }),
  'webhook-timestamp': z
    .string()
    .regex(/^\d+$/)
    .meta({ description: 'Standard Webhooks: when this attempt was sent, UTC epoch seconds', example: '1795000020' }),
  'webhook-signature': z.string().meta({
    description:
      'Standard Webhooks: `v1,<base64>` HMAC-SHA256 over `webhook-id.webhook-timestamp.body`, keyed with the base64 part ' +
      'of the secret after `whsec_`; during a secret rotation a space-separated list, one per secret',
    example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  }),
});

/** `status.updated` → `StatusUpdatedWebhookEvent`, the component's name. */
const componentName = (type: string) =>
  type
    .split('.')
    .map((part) => part[0].toUpperCase() + part.slice(1))
    .join('') + 'WebhookEvent';

function delivery(type: WebhookEventType): ZodOpenApiOperationObject {
  const envelope = z
    .object({
      event: z.literal(type),
      timestamp: isoTimestamp.meta({ description: 'when the event was created; the same on every attempt' }),
      data: type === 'webhook_endpoint.disabled' ? endpointDisabledData : statusRecord,
    })
    .strict()
    .meta({ id: componentName(type), description: `The body of a \`${type}\` webhook: sent byte for byte the same on every attempt` });
  return {
    operationId: `${type.replace('.', '_')}_webhook`,
    summary: type,
    description:
      `Sent when ${WHEN[type]}. POSTed to every enabled endpoint of the issuer and mode that subscribes to \`${type}\`, with the ` +
      "endpoint's custom headers. " +
      (type === 'webhook_endpoint.disabled'
        ? '`data` is the disabled endpoint. '
        : '`data` is the status record as `GET /v1/status/{id}` returns it after the change. ') +
      'Delivery is at least once: dedupe by `X-Service-Event-Id`. A non-2xx answer, or none within 5 s, is retried ' +
      'after 1 min, 5 min, 30 min, 2 h and 8 h (docs/webhooks.md).',
    requestParams: { header: signatureHeaders },
    requestBody: { required: true, content: { 'application/json': { schema: envelope } } },
    responses: {
      '2XX': { description: 'received: the delivery is complete' },
      default: { description: 'any other status, or no answer within 5 s: the attempt failed and is retried' },
    },
  };
}

/** One webhook per event type the service sends, named by the type. */
export function webhookRequests(): ZodOpenApiPathsObject {
  return Object.fromEntries(WEBHOOK_EVENT_TYPES.map((type) => [type, { post: delivery(type) }]));
}
