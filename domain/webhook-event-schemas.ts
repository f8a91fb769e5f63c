// The wire contract of webhook events and replays as an API (docs/webhooks.md "Webhook events",
// "Replays over the API"): the zod schemas api/routes/webhook-events.ts and replays.ts validate with
// and api/openapi-webhooks.ts documents.
import { z } from 'zod';
import { cursorParam, isoTimestamp, listLimit } from './field-schemas.js';
import { webhookEventType } from './vocabulary.js';
import { endpointId } from './webhook-endpoint-schemas.js';

// ---------- ids ----------

export const webhookEventId = z
  .string()
  .regex(/^evt_[0-9A-Za-z]{16}$/, 'must be a webhook event id (evt_ and 16 letters or digits)')
  .meta({ description: 'webhook event id', example: 'evt_8HqT2mZp7TxA1c4k' });
export const replayId = z
  .string()
  .regex(/^replay-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'must be a replay id (replay- and a UUID)')
  .meta({ description: 'replay id', example: 'replay-0b8e3c1e-4f6a-4b7d-9a51-2c3d4e5f6a7b' });
/** Any UUID: a test event's dispatch id is the nil UUID (domain/sample-event.ts). */
const anyUuid = z.string().regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'must be a UUID');

// ---------- webhook events ----------

export const eventListQuery = z
  .object({
    type: webhookEventType.optional().meta({ description: 'only events of this type' }),
    dispatch_id: anyUuid.optional().meta({ description: "only this dispatch's events (test events carry the nil UUID)" }),
    since: isoTimestamp.optional().meta({ description: 'only events created at or after this instant' }),
    limit: listLimit,
    cursor: cursorParam,
  })
  .strict();

export const webhookEventRecord = z
  .object({
    id: webhookEventId,
    type: webhookEventType,
    dispatch_id: z.string().meta({ description: 'the dispatch the event is about; the nil UUID for a test event' }),
    created_at: isoTimestamp,
    data: z.record(z.string(), z.unknown()).meta({ description: 'the status record the webhook carried (its `data`)' }),
  })
  .strict()
  .meta({ id: 'WebhookEvent' });

export const ATTEMPT_OUTCOMES = ['delivered', 'failed', 'undeliverable'] as const;

export const webhookEventDetail = webhookEventRecord
  .extend({
    deliveries: z.array(
      z
        .object({
          endpoint_id: z.string(),
          state: z.enum(['pending', 'delivered', 'undeliverable', 'skipped']),
          attempts: z.array(
            z
              .object({
                number: z.number().int().min(1).meta({ description: 'as sent in X-Service-Delivery-Attempt; a replay starts again at 1' }),
                attempted_at: isoTimestamp,
                status_code: z.number().int().nullable().meta({ description: "the consumer's HTTP status; null when none came" }),
                outcome: z.enum(ATTEMPT_OUTCOMES).meta({ description: 'undeliverable: failed with no retry left' }),
                duration_ms: z.number().int(),
              })
              .strict(),
          ),
        })
        .strict(),
    ),
  })
  .meta({ id: 'WebhookEventDetail' });

export const webhookEventList = z
  .object({
    data: z.array(webhookEventRecord).meta({ description: 'newest first' }),
    next_cursor: z.string().nullable().meta({ description: 'pass as `cursor` for the next page; null on the last page' }),
  })
  .meta({ id: 'WebhookEventList' });

// ---------- replays ----------

export const MAX_REPLAY_EVENT_IDS = 1000;

/**
 * An instant of the years 0001–9999 in UTC: the replay carries its range as ISO text to Postgres,
 * which reads neither year 0000 nor the extended `+010000` form (a 500 for `0000-01-01T00:00:00Z`,
 * or `0001-01-01T00:00:00+23:59`). No event was created outside it.
 */
const replayInstant = isoTimestamp.refine((timestamp) => {
  const year = new Date(timestamp).getUTCFullYear();
  return year >= 1 && year <= 9999;
}, 'must lie within the years 0001 to 9999 in UTC');

export const replayRangeBody = z
  .object({
    since: replayInstant.meta({ description: 'replay the events created at or after this instant…' }),
    until: replayInstant.meta({ description: '…and before this one; must be later than since' }),
  })
  .strict();
export const replayEventsBody = z
  .object({
    event_ids: z
      .array(webhookEventId)
      .min(1)
      .max(MAX_REPLAY_EVENT_IDS)
      .meta({ description: `up to ${MAX_REPLAY_EVENT_IDS} event ids; those never delivered to this endpoint are ignored` }),
  })
  .strict();
export const replayBody = z.union([replayRangeBody, replayEventsBody]).meta({ id: 'WebhookReplayRequest' });

export const replayRecord = z
  .object({
    id: replayId,
    endpoint_id: endpointId,
    status: z.enum(['running', 'completed', 'failed']),
    total: z.number().int().meta({ description: 'deliveries the request matched when the replay started' }),
    sent: z.number().int().meta({ description: 'deliveries settled so far (delivered, failed or skipped)' }),
    failed: z.number().int().meta({ description: 'deliveries still undeliverable after the replay’s attempts' }),
    created_at: isoTimestamp,
    completed_at: isoTimestamp.nullable(),
  })
  .strict()
  .meta({ id: 'WebhookReplay' });

/**
 * Which deliveries a replay sends again, as a workflow carries it (JSON: dates as ISO strings): one
 * event (to every endpoint it went to, or only to `endpointId`), an endpoint's events created in
 * [since, until), or a list of events to one endpoint (the API's `event_ids`, at most 1,000).
 */
export type ReplayFilterInput =
  | { eventId: string; endpointId?: string }
  | { endpointId: string; since: string; until: string }
  | { endpointId: string; eventIds: string[] };

/** Where a paged replay goes on: after this (event creation time, event id, endpoint id). */
export interface ReplayCursor {
  createdAt: string;
  eventId: string;
  endpointId: string;
}
