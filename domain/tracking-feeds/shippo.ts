// Shippo as a tracking feed (docs/tracking-feed-providers.md "Shippo"): its `track_updated` webhook
// `{ event, test, data: Track }`, the Track carrying its whole history in `tracking_history`. Shippo
// does not sign its webhooks for every account, so the feed's URL carries a token the service
// generated (`?token=…`) and that token is the authentication. Field names are the wire names of the
// `shippo` SDK's published types (models/components/track.d.ts, trackingstatus.d.ts,
// trackingstatusenum.d.ts, trackingstatussubstatus.d.ts, webhookpayloadtrack.d.ts; the SDK renames
// them camelCase, its track.js / trackingstatus.js give the wire names).
import { z } from 'zod';
import {
  checkpointHash,
  checkpointTime,
  constantTimeEqual,
  failure,
  locationText,
  originalStatus,
  optionalTimeString,
  providerEventId,
  queryValue,
} from './common.js';
import { FIELD_ERRORS } from '../field-errors.js';
import { wellFormedString } from '../field-schemas.js';
import {
  normaliseCarrier,
  type CheckpointTime,
  type FeedProviderModule,
  type MappedCheckpointStatus,
  type ProviderTracking,
} from './provider.js';
import { referencesFrom } from './references.js';
import { readCheckpointTime } from './times.js';

/** Shippo's tracking statuses (the SDK's TrackingStatusEnum). */
export const SHIPPO_STATUSES = ['UNKNOWN', 'PRE_TRANSIT', 'TRANSIT', 'DELIVERED', 'RETURNED', 'FAILURE'] as const;
export type ShippoStatus = (typeof SHIPPO_STATUSES)[number];

/** Shippo's substatus codes (its tracking docs' "Event Definitions"; the SDK types them as a string). */
export const SHIPPO_SUBSTATUSES = [
  'information_received',
  'address_issue',
  'contact_carrier',
  'delayed',
  'delivery_attempted',
  'delivery_rescheduled',
  'delivery_scheduled',
  'location_inaccessible',
  'notice_left',
  'out_for_delivery',
  'package_accepted',
  'package_arrived',
  'package_damaged',
  'package_departed',
  'package_forwarded',
  'package_held',
  'package_processed',
  'package_processing',
  'pickup_available',
  'reschedule_delivery',
  'delivered',
  'return_to_sender',
  'package_unclaimed',
  'package_undeliverable',
  'package_disposed',
  'package_lost',
  'other',
] as const;

/**
 * THE table: a status's meaning, then what a substatus changes. `UNKNOWN` says nothing → ignored.
 * Within `TRANSIT`, a failed delivery (`delivery_attempted`, `notice_left`, `location_inaccessible`,
 * `pickup_available`: the card waits at a pickup point) reads as EasyPost's and AfterShip's failed
 * attempts do (`exception` `failed_attempt`), a wrong address as `address_issue`, a damaged package
 * as `damaged`, and `out_for_delivery` as itself; other transit substatuses (delays included, which
 * Shippo itself files under TRANSIT) stay `in_transit`. `FAILURE`'s reason is its substatus's when
 * it names one, else `other`.
 */
export const SHIPPO_TABLE: Record<
  ShippoStatus,
  { status: MappedCheckpointStatus | null; substatus?: Partial<Record<string, MappedCheckpointStatus>> }
> = {
  UNKNOWN: { status: null },
  PRE_TRANSIT: { status: { status: 'dispatched' } },
  TRANSIT: {
    status: { status: 'in_transit' },
    substatus: {
      out_for_delivery: { status: 'out_for_delivery' },
      delivery_attempted: { status: 'exception', reason: 'failed_attempt' },
      notice_left: { status: 'exception', reason: 'failed_attempt' },
      location_inaccessible: { status: 'exception', reason: 'failed_attempt' },
      pickup_available: { status: 'exception', reason: 'failed_attempt' },
      address_issue: { status: 'exception', reason: 'address_issue' },
      package_damaged: { status: 'exception', reason: 'damaged' },
    },
  },
  DELIVERED: { status: { status: 'delivered' } },
  RETURNED: { status: { status: 'exception', reason: 'returned' } },
  FAILURE: {
    status: { status: 'exception', reason: 'other' },
    substatus: {
      package_lost: { status: 'exception', reason: 'lost' },
      package_damaged: { status: 'exception', reason: 'damaged' },
      address_issue: { status: 'exception', reason: 'address_issue' },
      return_to_sender: { status: 'exception', reason: 'returned' },
      package_unclaimed: { status: 'exception', reason: 'failed_attempt' },
    },
  },
};

export function mapShippoStatus(status: string, substatus: string | null | undefined): MappedCheckpointStatus | null {
  const table: Record<string, (typeof SHIPPO_TABLE)[ShippoStatus]> = SHIPPO_TABLE;
  if (!Object.hasOwn(table, status)) return null;
  const row = table[status];
  const refined = substatus && row.substatus && Object.hasOwn(row.substatus, substatus) ? row.substatus[substatus] : undefined;
  const mapped = refined ?? row.status;
  return mapped ? { ...mapped } : null;
}

/**
 * Shippo gives one time per event, `status_date`, "displayed in UTC": one without an offset is read
 * as UTC, as Shippo documents it, rather than in the checkpoint's zone.
 */
function shippoTime(original: string): CheckpointTime | undefined {
  const time = readCheckpointTime(original);
  if (!time || time.kind === 'instant') return time;
  const local = time.local.length === 10 ? `${time.local}T12:00:00` : time.local;
  return { kind: 'instant', iso: new Date(`${local}Z`).toISOString(), original };
}

const text = wellFormedString().nullish();

const trackingStatus = z.object({
  object_id: text,
  status: wellFormedString(), // empty: says nothing (ignored), not a refused body
  substatus: z.object({ code: wellFormedString(), text: text, action_required: z.boolean().nullish() }).nullish(),
  status_details: text,
  status_date: optionalTimeString, // optional in the SDK's TrackingStatus: without it, ignored
  location: z.object({ city: text, state: text, zip: text, country: text }).nullish(),
});

const track = z.object({
  carrier: wellFormedString().min(1),
  tracking_number: wellFormedString().min(1),
  metadata: text,
  transaction: text,
  tracking_history: z.array(trackingStatus),
});

const webhook = z.object({
  event: wellFormedString().min(1),
  test: z.boolean().optional(),
  data: z.unknown(),
});

export const shippo: FeedProviderModule = {
  name: 'shippo',
  secret: 'generated-token',
  setupHint:
    'In the Shippo API Portal open API config → Webhooks and add a webhook: set the Event Type to "Track Updated", the Environment to Production (or Test, as this feed is), and the URL to this URL exactly as shown, token included (Shippo takes URLs under 200 characters).',

  authenticate(request, token) {
    const received = queryValue(request, 'token');
    return received !== undefined && constantTimeEqual(received, token);
  },

  parse(body) {
    const outer = webhook.safeParse(body, FIELD_ERRORS);
    if (!outer.success) return failure(outer.error);
    // The same URL may receive an account's other events (transactions, batches): nothing to track.
    if (outer.data.event !== 'track_updated') return { ok: true, trackings: [] };
    const parsed = track.safeParse(outer.data.data, FIELD_ERRORS);
    if (!parsed.success) return failure(parsed.error, ['data']);
    const t = parsed.data;
    // Shippo has no id for a tracking beyond the carrier and the number (its own tracking URL is /tracks/{carrier}/{number}).
    const trackingId = `${t.carrier}/${t.tracking_number}`;
    const result: ProviderTracking = {
      trackingNumber: t.tracking_number,
      carrier: normaliseCarrier(t.carrier),
      providerTrackingId: trackingId,
      references: referencesFrom(t.metadata),
      checkpoints: t.tracking_history.map((s) => {
        const location = locationText(s.location?.city, s.location?.state, s.location?.country);
        const substatus = s.substatus?.code || undefined;
        const time = checkpointTime(s.status_date, shippoTime);
        return {
          eventId: providerEventId(s.object_id, () =>
            checkpointHash('shippo', trackingId, s.status_date ?? '', [s.status, substatus ?? ''].join('/'), location),
          ),
          mapped: time.time ? mapShippoStatus(s.status, substatus) : null,
          original: originalStatus('shippo', s.status, substatus),
          ...time,
          ...(location ? { location } : {}),
        };
      }),
    };
    return { ok: true, trackings: [result] };
  },
};
