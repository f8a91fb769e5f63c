// AfterShip as a tracking feed (docs/tracking-feed-providers.md "AfterShip"): its Tracking webhook
// `{ event, event_id?, msg: Tracking, ts }` (legacy v4 and the dated versions alike: `msg` is the
// tracking with its whole history in `checkpoints`), signed `aftership-hmac-sha256: <base64
// HMAC-SHA256 of the raw body, keyed with the webhook secret>`. Field names are those of
// @aftership/tracking-sdk's published types (src/model/Tracking.ts, Checkpoint.ts, Tag.ts); legacy v4
// bodies name countries `country_iso3` / `destination_country_iso3` where the dated versions say
// `country_region` / `destination_country_region`, and both are read.
import { z } from 'zod';
import {
  checkpointHash,
  checkpointTime,
  constantTimeEqual,
  failure,
  headerValue,
  hmacSha256,
  locationText,
  originalStatus,
  optionalTimeString,
  providerEventId,
} from './common.js';
import { FIELD_ERRORS } from '../field-errors.js';
import { UNPAIRED_SURROGATE_MESSAGE, wellFormedString } from '../field-schemas.js';
import { normaliseCarrier, type FeedProviderModule, type MappedCheckpointStatus, type ProviderTracking } from './provider.js';
import { referencesFrom } from './references.js';
import { readCheckpointTime } from './times.js';

/** AfterShip's delivery statuses (the SDK's `Tag` enum). */
export const AFTERSHIP_TAGS = [
  'Pending',
  'InfoReceived',
  'InTransit',
  'OutForDelivery',
  'AttemptFail',
  'Delivered',
  'AvailableForPickup',
  'Exception',
  'Expired',
] as const;
export type AfterShipTag = (typeof AFTERSHIP_TAGS)[number];
type Reason = NonNullable<MappedCheckpointStatus['reason']>;

/**
 * THE table, by tag. `Pending`, `InfoReceived` and `Expired` say nothing about where the card is
 * (not yet tracked, a label only, tracking given up) → ignored. `AvailableForPickup` waits at a
 * pickup point because it could not be handed over → `exception` `failed_attempt`, as EasyPost's
 * `available_for_pickup` reads. `Exception`'s reason comes from the subtag (below), else `other`.
 */
export const AFTERSHIP_TAG_TABLE: Record<AfterShipTag, MappedCheckpointStatus | null> = {
  Pending: null,
  InfoReceived: null,
  InTransit: { status: 'in_transit' },
  OutForDelivery: { status: 'out_for_delivery' },
  AttemptFail: { status: 'exception', reason: 'failed_attempt' },
  Delivered: { status: 'delivered' },
  AvailableForPickup: { status: 'exception', reason: 'failed_attempt' },
  Exception: { status: 'exception', reason: 'other' },
  Expired: null,
};

/**
 * The reason of an `Exception` by subtag (AfterShip's "Delivery Sub-statuses"); a subtag not listed
 * (AfterShip adds some now and then) keeps `other`.
 */
export const AFTERSHIP_EXCEPTION_SUBTAGS: Record<string, Reason> = {
  Exception_001: 'other', // Exception
  Exception_002: 'address_issue', // Customer moved
  Exception_003: 'returned', // Customer refused delivery
  Exception_004: 'postal_delay', // Delayed (customs clearance)
  Exception_005: 'postal_delay', // Delayed (external factors)
  Exception_006: 'other', // Held for payment
  Exception_007: 'address_issue', // Incorrect address
  Exception_008: 'failed_attempt', // Pick up missed
  Exception_009: 'other', // Rejected by carrier
  Exception_010: 'returned', // Returning to sender
  Exception_011: 'returned', // Returned to sender
  Exception_012: 'damaged', // Shipment damaged
  Exception_013: 'lost', // Shipment lost
  Exception_016: 'postal_delay', // Delayed (processing issue)
  Exception_017: 'postal_delay', // Delayed (extreme weather)
  Exception_018: 'other', // Incorrect / missing documents
};

export function mapAfterShipTag(tag: string, subtag: string | null | undefined): MappedCheckpointStatus | null {
  const table: Record<string, MappedCheckpointStatus | null> = AFTERSHIP_TAG_TABLE;
  const mapped = Object.hasOwn(table, tag) ? table[tag] : null;
  if (!mapped) return null;
  if (mapped.status === 'exception' && tag === 'Exception' && subtag && Object.hasOwn(AFTERSHIP_EXCEPTION_SUBTAGS, subtag)) {
    return { status: 'exception', reason: AFTERSHIP_EXCEPTION_SUBTAGS[subtag] };
  }
  return { ...mapped };
}

const text = wellFormedString().nullish();

const checkpoint = z.object({
  // Both optional in the SDK's Checkpoint: a checkpoint without them says nothing usable (ignored).
  checkpoint_time: optionalTimeString,
  tag: text,
  subtag: text,
  message: text,
  location: text,
  city: text,
  state: text,
  country_region: text,
  country_region_name: text,
  country_iso3: text,
  country_name: text,
  hash: text,
});

const tracking = z.object({
  // The dated versions made `id` 32 characters and carry the 24-character id of v4 as `legacy_id`:
  // the tracking's one id across versions is `legacy_id ?? id` (see parse).
  id: wellFormedString().min(1),
  legacy_id: wellFormedString().nullish(),
  tracking_number: wellFormedString().min(1),
  slug: text,
  order_id: text,
  // Only `dispatch_id` is read: a reference when it is text.
  custom_fields: z
    .looseObject({ dispatch_id: z.unknown().refine((id) => typeof id !== 'string' || id.isWellFormed(), UNPAIRED_SURROGATE_MESSAGE) })
    .nullish(),
  // Optional in the SDK's Tracking: absent or null is no checkpoints (a 200 with zero counts), not a
  // 400 that AfterShip would retry for days.
  checkpoints: z
    .array(checkpoint)
    .nullish()
    .transform((value) => value ?? []),
});

const webhook = z.object({
  event: wellFormedString().min(1),
  msg: z.unknown(),
  ts: z.number().optional(),
});

export const aftership: FeedProviderModule = {
  name: 'aftership',
  secret: 'provider',
  setupHint:
    'In your AfterShip Tracking admin go to Settings → Notifications → Webhooks: select the webhook version (the latest is preferred), insert this URL as the Webhook URL, select the events to receive (the delivery status updates), and click Save. Copy the webhook secret shown under Settings → Notifications into this feed.',

  authenticate(request, secret) {
    const received = headerValue(request, 'aftership-hmac-sha256');
    if (received === undefined) return false;
    return constantTimeEqual(received, hmacSha256(secret, request.rawBody).toString('base64'));
  },

  parse(body) {
    const outer = webhook.safeParse(body, FIELD_ERRORS);
    if (!outer.success) return failure(outer.error);
    const parsed = tracking.safeParse(outer.data.msg, FIELD_ERRORS);
    if (!parsed.success) return failure(parsed.error, ['msg']);
    const t = parsed.data;
    // The same tracking's id whichever webhook version sent it, so that a checkpoint without AfterShip's
    // `hash` sent by a v4 webhook and again by a dated one has one event id (a duplicate, not two events).
    const trackingId = t.legacy_id?.trim() ? t.legacy_id : t.id;
    const dispatchId = t.custom_fields?.dispatch_id;
    const result: ProviderTracking = {
      trackingNumber: t.tracking_number,
      ...(t.slug ? { carrier: normaliseCarrier(t.slug) } : {}),
      providerTrackingId: trackingId,
      references: referencesFrom(t.order_id, typeof dispatchId === 'string' ? dispatchId : undefined),
      checkpoints: t.checkpoints.map((c) => {
        const country = c.country_region ?? c.country_iso3;
        const location = c.location ? locationText(c.location) : locationText(c.city, c.state, c.country_region_name ?? c.country_name);
        const substatus = c.subtag ?? undefined;
        const tag = c.tag ?? '';
        const time = checkpointTime(c.checkpoint_time, (text) => readCheckpointTime(text, country));
        return {
          eventId: providerEventId(c.hash, () =>
            checkpointHash('aftership', trackingId, c.checkpoint_time ?? '', [tag, substatus ?? ''].join('/'), location),
          ),
          mapped: time.time ? mapAfterShipTag(tag, substatus) : null,
          original: originalStatus('aftership', tag, substatus),
          ...time,
          ...(location ? { location } : {}),
        };
      }),
    };
    return { ok: true, trackings: [result] };
  },
};
