// The wire contract of tracking feeds (docs/tracking-feeds.md, DESIGN §10): the zod schemas
// api/routes/tracking-feeds.ts and api/routes/inbound.ts validate with and api/openapi-tracking-feeds.ts
// documents. The providers' own bodies are their modules' (domain/tracking-feeds/); here only what
// the service itself answers and takes.
import { z } from 'zod';
import { cursorParam, isoTimestamp, listLimit, plainText, wellFormedString } from './field-schemas.js';
import { FEED_PROVIDERS, type CheckpointTime } from './tracking-feeds/provider.js';
import { resolveCheckpointTime } from './tracking-feeds/times.js';
import { dispatchStatus } from './vocabulary.js';

export const feedId = z
  .string()
  .regex(/^fd_[0-9A-Za-z]{16}$/, 'must be a tracking feed id (fd_ and 16 letters or digits)')
  .meta({ description: 'tracking feed id', example: 'fd_4kR9wQ2mZp7TxA1c' });

export const feedProvider = z.enum(FEED_PROVIDERS).meta({ description: 'the aggregator that sends the webhooks' });

/**
 * The provider's webhook secret: never returned, never logged (messages never quote it). An HMAC key
 * (EasyPost, AfterShip) may be any text: EasyPost's own library keys with its NFKD form precisely for
 * secrets that are not ASCII. Ship24's travels in an `Authorization: Bearer` header, which carries
 * visible ASCII only (BEARER_SECRET; checked per provider, also by PATCH).
 */
// Control characters and spaces as explicit ranges, not \p{Cc} or \s: the OpenAPI document carries
// the pattern, and JSON Schema tools outside JavaScript (Python's re, for one) read neither alike.
const CONTROL = '\\u0000-\\u001f\\u007f-\\u009f';
const CONTROL_OR_SPACE = `${CONTROL}\\u0020\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff`;
const SECRET_TEXT = new RegExp(`^[^${CONTROL_OR_SPACE}](?:[^${CONTROL}]*[^${CONTROL_OR_SPACE}])?$`);
const feedSecret = wellFormedString()
  .min(8, 'must be at least 8 characters (the webhook secret the provider shows)')
  .max(512, 'must be at most 512 characters')
  .regex(SECRET_TEXT, 'must have no control characters, nor spaces at either end')
  .meta({
    description:
      "the provider's webhook secret (EasyPost, AfterShip, Ship24); never returned. A Ship24 secret must be visible ASCII (it comes back in an Authorization header)",
  });

/** A secret sent back in an HTTP header (Ship24's `Authorization: Bearer <secret>`): visible ASCII. */
export const BEARER_SECRET = /^[\x21-\x7E]+$/;
export const BEARER_SECRET_MESSAGE = 'must be visible ASCII characters without spaces (Ship24 sends it in an Authorization header)';
const bearerSecret = z
  .string()
  .min(8, 'must be at least 8 characters (the webhook secret the provider shows)')
  .max(512, 'must be at most 512 characters')
  .regex(BEARER_SECRET, BEARER_SECRET_MESSAGE)
  .meta({ description: "Ship24's webhook secret (visible ASCII); never returned" });

/**
 * One variant per kind of authentication: the providers that sign with their own webhook secret
 * require it; `shippo` takes none (the service generates a token, DESIGN §10).
 */
const description = plainText(1, 200).optional();
export const feedCreateBody = z
  .discriminatedUnion('provider', [
    z.object({ provider: z.enum(['easypost', 'aftership']), secret: feedSecret, description }).strict(),
    z.object({ provider: z.literal('ship24'), secret: bearerSecret, description }).strict(),
    z
      .object({ provider: z.literal('shippo'), description })
      .strict()
      .meta({ description: "no secret: the service generates a token, shown once in the answer's `url`" }),
  ])
  .meta({ id: 'TrackingFeedCreate' });
export type FeedCreateBody = z.output<typeof feedCreateBody>;

export const feedUpdateBody = z
  .object({
    secret: feedSecret.optional(),
    description: plainText(1, 200).nullable().optional().meta({ description: 'null clears it' }),
  })
  .strict()
  .meta({ id: 'TrackingFeedUpdate' });

export const feedListQuery = z.object({ limit: listLimit, cursor: cursorParam }).strict();

const count = z.number().int().min(0);
export const feedCounts = z
  .object({
    received: count.meta({ description: 'checkpoints received' }),
    applied: count.meta({ description: 'checkpoints that became new carrier events' }),
    duplicate: count.meta({ description: 'checkpoints already received (providers resend the whole history)' }),
    unmatched: count.meta({ description: 'checkpoints no dispatch matched (kept 30 days, applied at registration)' }),
    ignored: count.meta({ description: "checkpoints that say nothing about the card's whereabouts, or lie outside the time bounds" }),
    unauthorized: count.meta({ description: 'requests refused with 401 (wrong or missing signature or token)' }),
  })
  .strict()
  .meta({ id: 'TrackingFeedCounts', description: 'the last 24 hours' });

export const trackingFeed = z
  .object({
    id: feedId,
    provider: feedProvider,
    url: z.string().meta({
      description:
        'where the provider sends its webhooks: `{PUBLIC_BASE_URL}/v1/inbound/{id}`; for `shippo` the create answer alone adds `?token=…` (shown once)',
    }),
    description: z.string().nullable(),
    created_at: isoTimestamp,
    last_received_at: isoTimestamp.nullable().meta({ description: 'the last authenticated inbound request' }),
    counts: feedCounts,
  })
  .strict()
  .meta({ id: 'TrackingFeed' });

export const trackingFeedList = z
  .object({ data: z.array(trackingFeed), next_cursor: z.string().nullable() })
  .meta({ id: 'TrackingFeedList' });

export const unmatchedCheckpoint = z
  .object({
    tracking_number: z.string().meta({ description: 'upper-case, without spaces (as matching compares it)' }),
    carrier: z.string().nullable(),
    status: dispatchStatus,
    occurred_at: z.string().meta({
      description:
        "the checkpoint's time in UTC; a local time without offset or country is shown as sent until a dispatch's country resolves it",
    }),
    received_at: isoTimestamp,
  })
  .strict()
  .meta({ id: 'UnmatchedCheckpoint' });

export const unmatchedList = z
  .object({ data: z.array(unmatchedCheckpoint), next_cursor: z.string().nullable() })
  .meta({ id: 'UnmatchedCheckpointList' });

/** Why a feed's checkpoint changed nothing (docs/tracking-feeds.md "Ignored checkpoints"): stable codes. */
export const IGNORE_REASONS = ['no_status_mapping', 'no_time', 'malformed', 'out_of_bounds', 'dispatch_closed'] as const;
export type IgnoreReason = (typeof IGNORE_REASONS)[number];

export const ignoredCheckpoint = z
  .object({
    tracking_number: z.string().meta({ description: 'upper-case, without spaces (as matching compares it)' }),
    carrier: z.string().nullable(),
    dispatch_id: z
      .uuid()
      .nullable()
      .meta({ description: 'the dispatch it matched (`out_of_bounds`, `dispatch_closed`); null when it was ignored before matching' }),
    status: z.string().meta({ description: "the provider's own status, as sent" }),
    substatus: z.string().nullable().meta({ description: "the provider's own sub-status, as sent" }),
    time: z.string().nullable().meta({
      description:
        "the checkpoint's time as the provider wrote it (one that cannot be read: control characters as spaces, at most 100 characters); null when it gave none",
    }),
    reason: z.enum(IGNORE_REASONS).meta({
      description:
        '`no_status_mapping`: the status says nothing about where the card is (or is empty); `no_time`: the checkpoint has no time, or one that cannot be read (`time` shows it); ' +
        "`malformed`: its tracking is not the provider's shape though the body around it is (Ship24's `trackings`; `message` names the field; the body's other trackings still apply); " +
        "`out_of_bounds`: its time lies outside the dispatch's time bounds; `dispatch_closed`: the dispatch's workflow was terminated or failed undelivered",
    }),
    message: z.string().meta({ description: 'the reason in words' }),
    received_at: isoTimestamp,
  })
  .strict()
  .meta({ id: 'IgnoredCheckpoint' });

export const ignoredList = z
  .object({ data: z.array(ignoredCheckpoint), next_cursor: z.string().nullable() })
  .meta({ id: 'IgnoredCheckpointList' });

export const inboundReceipt = z
  .object({
    received: count,
    applied: count,
    duplicate: count,
    unmatched: count,
    ignored: count,
  })
  .strict()
  .meta({ id: 'InboundReceipt', description: 'answered once every checkpoint of the body is durable' });

/** An unmatched checkpoint's time as listed: an instant, a local time resolved in its own country's zone, else as sent. */
export function shownCheckpointTime(time: CheckpointTime): string {
  if (time.kind === 'instant') return new Date(time.iso).toISOString();
  return time.countryCode ? resolveCheckpointTime(time, time.countryCode) : time.local;
}
