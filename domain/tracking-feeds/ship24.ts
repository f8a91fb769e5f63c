// Ship24 as a tracking feed (docs/tracking-feed-providers.md "Ship24"): its tracker webhook
// `{ trackings: [{ metadata, tracker, shipment, events, statistics }] }`, one tracking or several
// grouped in one request, authenticated by `Authorization: Bearer <webhook secret>`. Ship24 has no
// official npm SDK; the shape is that of its OpenAPI document (github.com/ship24/ship24-node,
// spec/ship24-tracking-api.yaml: "Receive webhooks - Tracking results", schemas webhook-tracker,
// shipment, event) and its status list (docs.ship24.com/status).
import { z } from 'zod';
import {
  checkpointHash,
  checkpointTime,
  constantTimeEqual,
  failure,
  headerValue,
  locationText,
  originalStatus,
  optionalTimeString,
  providerEventId,
} from './common.js';
import { FIELD_ERRORS } from '../field-errors.js';
import { wellFormedString } from '../field-schemas.js';
import {
  normaliseCarrier,
  type CheckpointTime,
  type FeedProviderModule,
  type MappedCheckpointStatus,
  type ProviderCheckpoint,
  type ProviderTracking,
} from './provider.js';
import { referencesFrom } from './references.js';
import { readCheckpointTime } from './times.js';

/** Ship24's `statusMilestone` values: the shipment's overall status at the time of each event. */
export const SHIP24_MILESTONES = [
  'pending',
  'info_received',
  'in_transit',
  'out_for_delivery',
  'failed_attempt',
  'available_for_pickup',
  'delivered',
  'exception',
] as const;
export type Ship24Milestone = (typeof SHIP24_MILESTONES)[number];

/** Ship24's `statusCode` values (per event; empty on events that mean little). */
export const SHIP24_STATUS_CODES = [
  'data_order_created',
  'data_order_cancelled',
  'data_delivery_proposed',
  'data_delivery_decided',
  'transit_handover',
  'transit_origin_country_departure',
  'destination_arrival',
  'customs_received',
  'customs_exception',
  'customs_rejected',
  'customs_cleared',
  'delivery_available_for_pickup',
  'delivery_out_for_delivery',
  'delivery_attempted',
  'delivery_exception',
  'delivery_refused',
  'delivery_delivered',
  'exception_return',
  'exception_lost',
  'exception_discarded',
] as const;
type Reason = NonNullable<MappedCheckpointStatus['reason']>;

/**
 * THE table, by milestone (present on every event, where `statusCode` may be empty). `pending` and
 * `info_received` say nothing about where the card is → ignored. `available_for_pickup` reads as
 * EasyPost's (`exception` `failed_attempt`). An `exception`'s reason comes from the event's
 * `statusCode` (below), else `other`.
 */
export const SHIP24_MILESTONE_TABLE: Record<Ship24Milestone, MappedCheckpointStatus | null> = {
  pending: null,
  info_received: null,
  in_transit: { status: 'in_transit' },
  out_for_delivery: { status: 'out_for_delivery' },
  failed_attempt: { status: 'exception', reason: 'failed_attempt' },
  available_for_pickup: { status: 'exception', reason: 'failed_attempt' },
  delivered: { status: 'delivered' },
  exception: { status: 'exception', reason: 'other' },
};

/** The reason of an `exception` milestone by the event's `statusCode`; codes not listed keep `other`. */
export const SHIP24_EXCEPTION_REASONS: Partial<Record<(typeof SHIP24_STATUS_CODES)[number], Reason>> = {
  exception_return: 'returned',
  exception_lost: 'lost',
  exception_discarded: 'damaged', // destroyed by the carrier
  delivery_refused: 'returned',
  delivery_attempted: 'failed_attempt',
  delivery_exception: 'failed_attempt',
  customs_exception: 'postal_delay',
  customs_rejected: 'returned',
};

export function mapShip24Milestone(milestone: string, statusCode: string | null | undefined): MappedCheckpointStatus | null {
  const table: Record<string, MappedCheckpointStatus | null> = SHIP24_MILESTONE_TABLE;
  const mapped = Object.hasOwn(table, milestone) ? table[milestone] : null;
  if (!mapped) return null;
  const reasons: Record<string, Reason | undefined> = SHIP24_EXCEPTION_REASONS;
  if (milestone === 'exception' && statusCode && Object.hasOwn(reasons, statusCode))
    return { status: 'exception', reason: reasons[statusCode] };
  return { ...mapped };
}

/**
 * `occurrenceDatetime` is Ship24's "logistics date and time": a date, a local date-time, or one with
 * an offset. Where it has none but the (deprecated) `utcOffset` says the offset, that wins. The
 * deprecated `datetime` is not read: it is the local time written with a `Z`, not the instant.
 */
function ship24Time(occurrence: string, utcOffset: string | null | undefined): CheckpointTime | undefined {
  const time = readCheckpointTime(occurrence);
  if (!time || time.kind === 'instant' || !utcOffset || time.local.length === 10) return time;
  const withOffset = readCheckpointTime(`${time.local}${utcOffset}`);
  return withOffset?.kind === 'instant' ? { ...withOffset, original: occurrence } : time;
}

const text = wellFormedString().nullish();

const event = z.object({
  eventId: text,
  trackingNumber: text,
  status: text,
  // Both optional in Ship24's event schema: an event without them says nothing usable (ignored).
  occurrenceDatetime: optionalTimeString,
  location: text,
  courierCode: text,
  statusCode: text,
  statusCategory: text,
  statusMilestone: text,
  utcOffset: text,
});

const tracking = z.object({
  metadata: z.object({ topic: text, messageId: text }).nullish(),
  tracker: z.object({
    trackerId: wellFormedString().min(1),
    trackingNumber: wellFormedString().min(1),
    shipmentReference: text,
    clientTrackerId: text,
    courierCode: z.union([wellFormedString(), z.array(wellFormedString())]).nullish(),
  }),
  // A proof-of-delivery message (topic `tracking/pod`) has no events.
  events: z.array(event).optional(),
});

const webhook = z.object({ trackings: z.array(z.unknown()) });

export const ship24: FeedProviderModule = {
  name: 'ship24',
  secret: 'provider',
  setupHint:
    'In your Ship24 dashboard open Integrations → Webhook and set this URL as your Webhook URL; copy the Webhook Secret Ship24 allocated to your account (shown on the same page) into this feed: Ship24 sends it in an "Authorization: Bearer …" header. The same page sends a test webhook with dummy tracking events.',

  authenticate(request, secret) {
    // The scheme in any case (RFC 9110 §11.1: auth schemes are case-insensitive); the secret as it is.
    const received = headerValue(request, 'authorization');
    return received !== undefined && /^bearer /i.test(received) && constantTimeEqual(received.slice('Bearer '.length), secret);
  },

  parse(body) {
    const outer = webhook.safeParse(body, FIELD_ERRORS);
    if (!outer.success) return failure(outer.error);
    const trackings = outer.data.trackings.map((raw, index): ProviderTracking => {
      const parsed = tracking.safeParse(raw, FIELD_ERRORS);
      // One tracking not in Ship24's shape inside a group that is: its checkpoints are ignored (listed
      // as `malformed`), not the whole body refused, which Ship24 would retry for days while the
      // other trackings of the group never applied (docs/tracking-feed-providers.md "Ship24").
      if (!parsed.success) return malformedTracking(raw, failure(parsed.error, ['trackings', String(index)]));
      const { tracker, events = [] } = parsed.data;
      const courier = Array.isArray(tracker.courierCode) ? tracker.courierCode[0] : tracker.courierCode;
      const carrier = courier ?? events.find((e) => e.courierCode)?.courierCode;
      return {
        trackingNumber: tracker.trackingNumber,
        ...(carrier ? { carrier: normaliseCarrier(carrier) } : {}),
        providerTrackingId: tracker.trackerId,
        references: referencesFrom(tracker.clientTrackerId, tracker.shipmentReference),
        checkpoints: events.map((e) => eventCheckpoint(tracker.trackerId, e)),
      };
    });
    // Not one tracking in Ship24's shape: the body is not Ship24's (DESIGN §10), a 400 naming the field.
    const firstProblem = trackings[0]?.malformed;
    if (firstProblem && trackings.every((t) => t.malformed)) return { ok: false, ...firstProblem };
    return { ok: true, trackings };
  },
};

type EventFields = Partial<Record<keyof z.output<typeof event>, string | null>>;

/** One Ship24 event as a checkpoint. */
function eventCheckpoint(trackerId: string, e: EventFields): ProviderCheckpoint {
  const location = locationText(e.location);
  const milestone = e.statusMilestone ?? '';
  const occurrence = e.occurrenceDatetime?.trim() ? e.occurrenceDatetime : undefined;
  const time = checkpointTime(occurrence, (text) => ship24Time(text, e.utcOffset));
  return {
    eventId: providerEventId(e.eventId, () =>
      checkpointHash('ship24', trackerId, occurrence ?? '', [milestone, e.statusCode ?? ''].join('/'), location),
    ),
    mapped: time.time ? mapShip24Milestone(milestone, e.statusCode) : null,
    original: originalStatus('ship24', milestone, e.statusCode),
    ...time,
    ...(location ? { location } : {}),
  };
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
/** Text that Postgres can keep (well-formed, see wellFormedString), else none. */
const textOf = (value: unknown): string | undefined => (typeof value === 'string' && value.isWellFormed() ? value : undefined);

/**
 * A tracking that is not Ship24's shape, read as far as it can be: its text fields where they are
 * text, one checkpoint (never applied: `mapped` null) per element of its `events` list under the
 * event id a well-formed resend will give it (so that it then leaves the ignored list), or one for the
 * whole tracking when it has no list.
 */
function malformedTracking(raw: unknown, problem: { field: string; message: string }): ProviderTracking {
  const object = isRecord(raw) ? raw : {};
  const tracker = isRecord(object.tracker) ? object.tracker : {};
  const trackerId = textOf(tracker.trackerId) ?? '';
  const trackingNumber = textOf(tracker.trackingNumber) ?? '';
  const courier = Array.isArray(tracker.courierCode) ? textOf(tracker.courierCode[0]) : textOf(tracker.courierCode);
  const events = Array.isArray(object.events) ? object.events : undefined;
  const checkpoints = events
    ? events.map((e, index) => {
        const fields = isRecord(e) ? Object.fromEntries(Object.keys(event.shape).map((key) => [key, textOf(e[key])])) : {};
        const read = eventCheckpoint(trackerId, isRecord(e) ? fields : { eventId: checkpointHash('ship24', trackerId, '', `malformed/${index}`, undefined) }); // prettier-ignore
        return { ...read, mapped: null };
      })
    : [
        {
          eventId: checkpointHash(
            'ship24',
            trackerId || trackingNumber,
            '',
            'malformed',
            wholeTrackingKey(raw, trackerId || trackingNumber),
          ),
          mapped: null,
          original: originalStatus('ship24', '', undefined),
          time: null,
        },
      ];
  return {
    trackingNumber,
    ...(courier ? { carrier: normaliseCarrier(courier) } : {}),
    ...(trackerId ? { providerTrackingId: trackerId } : {}),
    references: referencesFrom(textOf(tracker.clientTrackerId), textOf(tracker.shipmentReference)),
    checkpoints,
    malformed: { field: problem.field, message: problem.message },
  };
}

/** What names a tracking with no events list: its tracker's id or number, else its whole text (the same each time it is resent). */
function wholeTrackingKey(raw: unknown, name: string): string | undefined {
  if (name) return undefined;
  try {
    return JSON.stringify(raw) ?? String(raw);
  } catch {
    return String(raw);
  }
}
