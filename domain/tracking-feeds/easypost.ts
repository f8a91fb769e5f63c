// EasyPost as a tracking feed (docs/tracking-feed-providers.md "EasyPost"): its webhook Event
// (`tracker.created`, `tracker.updated`) whose `result` is a Tracker with its whole history in
// `tracking_details`, signed `X-Hmac-Signature: hmac-sha256-hex=<hex>` with the NFKD form of the
// webhook secret. Field names are those of @easypost/api's published types (types/Tracker/*.d.ts,
// types/Event/Event.d.ts); the signature is checked as that library's Utils.validateWebhook checks it,
// which test/domain/tracking-feeds/easypost.unit.test.ts uses as an oracle.
import { z } from 'zod';
import { VOCABULARY_TABLE } from '../carrier-vocabularies.js';
import {
  checkpointHash,
  checkpointTime,
  constantTimeEqual,
  failure,
  headerValue,
  hmacSha256,
  locationText,
  originalStatus,
} from './common.js';
import { FIELD_ERRORS } from '../field-errors.js';
import { wellFormedString } from '../field-schemas.js';
import { readCheckpointTime } from './times.js';
import { normaliseCarrier, type FeedProviderModule, type MappedCheckpointStatus, type ProviderTracking } from './provider.js';

/** EasyPost's `status_detail` values (ITrackerStatusDetail). */
export const EASYPOST_STATUS_DETAILS = [
  'address_correction',
  'arrived_at_destination',
  'arrived_at_facility',
  'arrived_at_pickup_location',
  'awaiting_information',
  'cancelled',
  'damaged',
  'delayed',
  'delivery_exception',
  'departed_facility',
  'departed_origin_facility',
  'expired',
  'failure',
  'held',
  'in_transit',
  'label_created',
  'lost',
  'missorted',
  'out_for_delivery',
  'received_at_destination_facility',
  'received_at_origin_facility',
  'refused',
  'return',
  'status_update',
  'transferred_to_destination_carrier',
  'transit_exception',
  'unknown',
  'weather_delay',
] as const;
type Reason = NonNullable<MappedCheckpointStatus['reason']>;

/**
 * The status is read by the carrier vocabulary's table (domain/carrier-vocabularies.ts, the one copy
 * of what EasyPost's statuses mean; `unknown` and `error` → ignored). Where that table can only say
 * `exception` `other` (`failure`, `cancelled`), the `status_detail` names the reason when it knows
 * one; `undefined` = no better reason than the status's own.
 */
export const EASYPOST_DETAIL_REASONS: Record<(typeof EASYPOST_STATUS_DETAILS)[number], Reason | undefined> = {
  address_correction: 'address_issue',
  arrived_at_destination: undefined,
  arrived_at_facility: undefined,
  arrived_at_pickup_location: 'failed_attempt',
  awaiting_information: undefined,
  cancelled: undefined,
  damaged: 'damaged',
  delayed: 'postal_delay',
  delivery_exception: 'failed_attempt',
  departed_facility: undefined,
  departed_origin_facility: undefined,
  expired: undefined,
  failure: undefined,
  held: 'postal_delay',
  in_transit: undefined,
  label_created: undefined,
  lost: 'lost',
  missorted: 'postal_delay',
  out_for_delivery: undefined,
  received_at_destination_facility: undefined,
  received_at_origin_facility: undefined,
  refused: 'returned',
  return: 'returned',
  status_update: undefined,
  transferred_to_destination_carrier: undefined,
  transit_exception: 'postal_delay',
  unknown: undefined,
  weather_delay: 'postal_delay',
};

export function mapEasyPostStatus(status: string, detail: string | null | undefined): MappedCheckpointStatus | null {
  const table: Record<string, MappedCheckpointStatus | undefined> = VOCABULARY_TABLE.easypost;
  const mapped = Object.hasOwn(table, status) ? table[status] : undefined;
  if (!mapped) return null;
  const reasons: Record<string, Reason | undefined> = EASYPOST_DETAIL_REASONS;
  const better = detail && Object.hasOwn(reasons, detail) ? reasons[detail] : undefined;
  return mapped.status === 'exception' && mapped.reason === 'other' && better ? { status: 'exception', reason: better } : { ...mapped };
}

const trackingLocation = z
  .object({
    city: wellFormedString().nullish(),
    state: wellFormedString().nullish(),
    country: wellFormedString().nullish(),
    zip: wellFormedString().nullish(),
  })
  .nullish();

const trackingDetail = z.object({
  message: wellFormedString().nullish(),
  description: wellFormedString().nullish(),
  // Text that says nothing usable (an empty status, a time that cannot be read) makes the checkpoint ignored, not the body refused.
  status: wellFormedString(),
  status_detail: wellFormedString().nullish(),
  datetime: wellFormedString(),
  source: wellFormedString().nullish(),
  carrier_code: wellFormedString().nullish(),
  tracking_location: trackingLocation,
});

const tracker = z.object({
  id: wellFormedString().min(1),
  object: z.literal('Tracker'),
  tracking_code: wellFormedString().min(1),
  status: wellFormedString().nullish(),
  carrier: wellFormedString().nullish(),
  tracking_details: z.array(trackingDetail),
});

const event = z.object({
  object: z.literal('Event'),
  description: wellFormedString(),
  result: z.unknown(),
});

/** The Event descriptions that carry a Tracker; an account's webhook also receives others (shipments, batches…), which name no checkpoint. */
const TRACKER_EVENTS = new Set(['tracker.created', 'tracker.updated']);

const SIGNATURE_PREFIX = 'hmac-sha256-hex=';

export const easypost: FeedProviderModule = {
  name: 'easypost',
  secret: 'provider',
  setupHint:
    'In the EasyPost Dashboard go to Webhooks & Events and click "Add webhook": select the environment (Production for live events, Test for test mode events, as this feed is), enter this URL as the endpoint URL, select the tracker.created and tracker.updated events (or leave all selected), and set the same webhook secret you give this feed (EasyPost then signs every event in its X-Hmac-Signature header).',

  authenticate(request, secret) {
    const received = headerValue(request, 'x-hmac-signature');
    if (received === undefined) return false;
    // As EasyPost's library signs: the body read as UTF-8, with a whole-number `"weight": 12` written
    // `12.0` (its fix for bodies re-serialised by a JSON parser; the raw bytes EasyPost sends already
    // say `12.0`, so on them this changes nothing), keyed with the secret's NFKD form.
    const body = request.rawBody.toString('utf8').replace(/("weight":\s*)(\d+)(\s*)(?=,|\})/g, '$1$2.0');
    const expected =
      SIGNATURE_PREFIX + hmacSha256(Buffer.from(secret.normalize('NFKD'), 'utf8'), Buffer.from(body, 'utf8')).toString('hex');
    return constantTimeEqual(received, expected);
  },

  parse(body) {
    const outer = event.safeParse(body, FIELD_ERRORS);
    if (!outer.success) return failure(outer.error);
    if (!TRACKER_EVENTS.has(outer.data.description)) return { ok: true, trackings: [] };
    const parsed = tracker.safeParse(outer.data.result, FIELD_ERRORS);
    if (!parsed.success) return failure(parsed.error, ['result']);
    const t = parsed.data;
    const tracking: ProviderTracking = {
      trackingNumber: t.tracking_code,
      ...(t.carrier ? { carrier: normaliseCarrier(t.carrier) } : {}),
      providerTrackingId: t.id,
      references: [],
      checkpoints: t.tracking_details.map((detail) => {
        const place = detail.tracking_location;
        const location = locationText(place?.city, place?.state, place?.country);
        const substatus = detail.status_detail ?? undefined;
        const time = checkpointTime(detail.datetime, (text) => readCheckpointTime(text, place?.country));
        return {
          eventId: checkpointHash('easypost', t.id, detail.datetime, [detail.status, substatus ?? ''].join('/'), location),
          mapped: time.time ? mapEasyPostStatus(detail.status, substatus) : null,
          original: originalStatus('easypost', detail.status, substatus),
          ...time,
          ...(location ? { location } : {}),
        };
      }),
    };
    return { ok: true, trackings: [tracking] };
  },
};
