// The wire contract of webhook endpoints as an API (docs/webhooks.md "Webhook endpoints"): the zod
// schemas api/routes/webhook-endpoints.ts validates with and api/openapi-webhooks.ts documents, and
// the rules of an endpoint's custom headers (which names are refused, how values are masked).
import { z } from 'zod';
import { cursorParam, isoTimestamp, listLimit, plainText } from './field-schemas.js';
import { WEBHOOK_EVENT_TYPES, webhookEventType } from './vocabulary.js';

// ---------- ids ----------

export const endpointId = z
  .string()
  .regex(/^whe_[0-9A-Za-z]{16}$/, 'must be a webhook endpoint id (whe_ and 16 letters or digits)')
  .meta({ description: 'webhook endpoint id', example: 'whe_4kR9wQ2mZp7TxA1c' });

// ---------- custom headers ----------

export const MAX_CUSTOM_HEADERS = 10;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
/** Visible ASCII, spaces and tabs inside: no CR or LF, so no header can smuggle another. */
const HEADER_VALUE = /^[\x21-\x7E]([\x20-\x7E\t]{0,1022}[\x21-\x7E])?$/;
/** Names the service sets itself, or that would change the HTTP exchange (compared case-insensitively). */
export const RESERVED_HEADER_NAMES = [
  'content-type',
  'content-length',
  'content-encoding',
  'transfer-encoding',
  'host',
  'user-agent',
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'proxy-authorization',
  'proxy-connection',
] as const;
export const RESERVED_HEADER_PREFIXES = ['x-service-', 'webhook-'] as const;

export function reservedHeaderName(name: string): boolean {
  const lower = name.toLowerCase();
  return (RESERVED_HEADER_NAMES as readonly string[]).includes(lower) || RESERVED_HEADER_PREFIXES.some((p) => lower.startsWith(p));
}

/** What the API answers for a stored value after creation: never the value itself. */
export function maskHeaderValue(value: string): string {
  return value.length >= 16 ? `****${value.slice(-4)}` : '****';
}

export function maskHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, maskHeaderValue(value)]));
}

// The messages never quote a value: a header's value is a credential and an error message is logged.
export const customHeaders = z
  .record(
    z.string().regex(HEADER_NAME, "a header name is 1 to 64 letters, digits or !#$%&'*+.^_`|~-"),
    z.string().regex(HEADER_VALUE, 'a header value is 1 to 1024 visible ASCII characters (spaces inside), no line breaks'),
  )
  .superRefine((headers, ctx) => {
    const names = Object.keys(headers);
    if (names.length > MAX_CUSTOM_HEADERS) ctx.addIssue({ code: 'custom', message: `at most ${MAX_CUSTOM_HEADERS} headers` });
    const seen = new Set<string>();
    for (const name of names) {
      if (reservedHeaderName(name))
        ctx.addIssue({ code: 'custom', path: [name], message: 'reserved: the service sets this header itself' });
      if (seen.has(name.toLowerCase())) ctx.addIssue({ code: 'custom', path: [name], message: 'given twice (names are case-insensitive)' });
      seen.add(name.toLowerCase());
    }
  })
  .meta({
    description:
      `up to ${MAX_CUSTOM_HEADERS} headers sent with every delivery attempt, e.g. \`{ "Authorization": "Bearer …" }\` for the ` +
      "consumer's gateway. Names the service sets itself are reserved (400): " +
      `${RESERVED_HEADER_NAMES.join(', ')} and any name starting with ${RESERVED_HEADER_PREFIXES.join(' or ')}. Values are never ` +
      'logged and are answered only masked (`****` and at most their last 4 characters) after creation.',
  });

// ---------- webhook endpoints ----------

const eventsField = z
  .array(webhookEventType)
  .min(1)
  .max(WEBHOOK_EVENT_TYPES.length * 4)
  .transform((events) => [...new Set(events)])
  .meta({ description: 'the event types the endpoint receives' });
// Control characters are refused (as in every text field): Postgres cannot store NUL, and the URL
// parser silently drops tabs and line breaks, so the URL kept would not be the one called.
const urlField = plainText(1, 2048).meta({
  description:
    'http or https URL of the consumer. Refused (400 `url: cannot receive webhooks: …`) when it resolves to a private, ' +
    'loopback or otherwise non-public address, as for every delivery (docs/webhooks.md)',
  example: 'https://hooks.example.com/cards',
});
const descriptionField = plainText(0, 500).nullable().meta({ description: 'for people; up to 500 characters' });
export const RATE_LIMIT_MAX = 1000;
const rateLimitField = z
  .number()
  .int()
  .min(1)
  .max(RATE_LIMIT_MAX)
  .nullable()
  .meta({
    description: `deliveries per second to this endpoint, 1–${RATE_LIMIT_MAX}, or null for no limit; enforced across every worker (deliveries wait, never dropped)`,
  });

export const endpointCreateBody = z
  .object({
    url: urlField,
    events: eventsField,
    description: descriptionField.optional(),
    headers: customHeaders.optional(),
    rate_limit: rateLimitField.optional(),
  })
  .strict()
  .meta({ id: 'WebhookEndpointCreate' });

export const endpointUpdateBody = z
  .object({
    url: urlField.optional(),
    events: eventsField.optional(),
    description: descriptionField.optional(),
    disabled: z
      .boolean()
      .optional()
      .meta({ description: 'true: the endpoint receives nothing (pending retries are skipped) until set back to false' }),
    headers: customHeaders.optional().meta({ description: 'replaces every custom header (`{}` removes them all)' }),
    rate_limit: rateLimitField.optional(),
  })
  .strict()
  .meta({ id: 'WebhookEndpointUpdate' });

export const endpointRecord = z
  .object({
    id: endpointId,
    url: z.string(),
    events: z.array(webhookEventType),
    description: z.string().nullable(),
    disabled: z.boolean(),
    disabled_reason: z
      .enum(['manual', 'failing'])
      .nullable()
      .meta({
        description:
          '`manual`: disabled through the API or the dashboard; `failing`: disabled automatically because every attempt ' +
          'failed for WEBHOOK_AUTO_DISABLE_AFTER (5 days); null while enabled',
      }),
    disabled_at: isoTimestamp.nullable().meta({ description: 'since when it is disabled; null while enabled' }),
    headers: z.record(z.string(), z.string()).meta({ description: 'custom header names with masked values' }),
    rate_limit: z.number().int().nullable(),
    created_at: isoTimestamp,
  })
  .strict()
  .meta({ id: 'WebhookEndpoint' });

export const endpointUpdated = endpointRecord
  .extend({
    missed: z
      .object({
        since: isoTimestamp.meta({ description: 'its first failed attempt (auto-disabled) or when it was disabled' }),
        until: isoTimestamp.meta({ description: 'when it was enabled again' }),
        count: z.number().int().min(0).meta({ description: 'its deliveries of the events created in [since, until) not delivered' }),
      })
      .strict()
      .optional()
      .meta({ description: 'only when this change enabled a disabled endpoint: replay it with POST …/replay `{ since, until }`' }),
  })
  .meta({ id: 'WebhookEndpointUpdated' });

export const endpointWithSecret = endpointRecord
  .extend({
    headers: z.record(z.string(), z.string()).meta({ description: 'on creation: the custom headers as given; masked ever after' }),
    secret: z.string().meta({ description: 'the signing secret (`whsec_…`): shown only in this response' }),
  })
  .meta({ id: 'WebhookEndpointWithSecret' });

export const rotatedEndpoint = endpointRecord
  .extend({
    secret: z.string().meta({ description: 'the new signing secret: shown only in this response' }),
    previous_secret_expires_at: isoTimestamp.meta({
      description: 'until then the previous secret also signs `webhook-signature`; `X-Service-Signature` uses the new one at once',
    }),
  })
  .meta({ id: 'WebhookEndpointRotated' });

export const MAX_OVERLAP_SECONDS = 30 * 86_400;
export const rotateBody = z
  .object({
    overlap_seconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_OVERLAP_SECONDS)
      .optional()
      .meta({ description: 'how long the previous secret keeps signing `webhook-signature` (default 86400, at most 30 days)' }),
  })
  .strict()
  .meta({ id: 'WebhookSecretRotation' });

export const testEventBody = z
  .object({
    type: webhookEventType
      .optional()
      .meta({ description: 'the event type to send (default: the first the endpoint subscribes to); the endpoint must subscribe to it' }),
  })
  .strict()
  .meta({ id: 'WebhookTestEvent' });

export const endpointList = z
  .object({
    data: z.array(endpointRecord).meta({ description: 'oldest first' }),
    next_cursor: z.string().nullable().meta({ description: 'pass as `cursor` for the next page; null on the last page' }),
  })
  .meta({ id: 'WebhookEndpointList' });

export const endpointListQuery = z.object({ limit: listLimit, cursor: cursorParam }).strict();

export const endpointDeleted = z
  .object({ id: endpointId, deleted: z.literal(true) })
  .strict()
  .meta({ id: 'WebhookEndpointDeleted' });
