// Step 6 of a carrier event's path (docs/architecture.md "The path of one carrier event"): the one
// transaction that writes a dispatch's change, called by activities/projection.ts (step 5).
// Tables: dispatches (the projection's row), prediction_log, carrier_events (the `effect` column,
// whose only writer on the live path this is), webhook_events and webhook_deliveries (the outbox),
// prediction_outcomes (the published accuracy's outcome of a delivered dispatch; its only writer).
//
// One statement, so one transaction: the projection row of the new version, the effects of the
// carrier events folded into it, the webhook events the change's activity decided
// (domain/state-machine.ts webhookEventsOf) and one delivery per subscribed endpoint commit together
// or not at all. Idempotent on (dispatch, version): each event's id is derived from its key
// `<dispatchId>:<version>:<type>`, events are created only with the version, so a retry after a
// committed attempt creates nothing and returns the same pending deliveries with what the row holds
// (what that attempt wrote, even if the retry computed another prediction), and a retry after a
// failed one writes everything. Only the first version carries the registration (the row's insert);
// later ones update the row. A write of an older version than the row holds changes no row.
// New pending deliveries are born claimed by the dispatch's driver, with what their first attempt
// needs read in the same statement (activities/webhook-delivery.ts HandedDeliveries).
// A dispatch whose erasure was requested is refused in the same statement (db/dispatches.ts
// notErased): from the request on nothing is written for it, no version, no effect, no webhook event
// (its deliveries' first attempts would go out unclaimed), even while its erasure's workflow has not
// run yet; the answer says `erased`.
// The version that delivers the dispatch also keeps its outcome for the published accuracy
// (docs/prediction-quality.md): the window logged at registration beside the delivered date, in a
// row that names no dispatch, so it is idempotent through this write rather than through a key.
import { createHash } from 'node:crypto';
import type { StatusRecord } from '../domain/dispatch-schemas.js';
import { normalisePostalCode, postalPrefixOf } from '../domain/prediction-model.js';
import { normaliseTrackingNumber } from '../domain/tracking-feeds/provider.js';
import type { EventEffect, ExceptionReason, NotLearnedReason, WebhookEventType } from '../domain/vocabulary.js';
import type { Pool, PoolClient } from './pool.js';
import { DRIVER_RUN_BUDGET_MS, type DeliveryToSend } from './webhooks.js';

export interface DispatchRegistrationRow {
  id: string;
  issuerId: string;
  mode: 'live' | 'test';
  dispatchDate: string;
  postalCode: string;
  countryCode: string;
  locale?: string;
  carrier?: string;
  trackingNumber?: string;
  reference?: string;
  /**
   * Canonical JSON of the registration body. Only the write that creates the row needs it (with the
   * carrier, tracking number and reference): absent, the change updates the row already there.
   */
  registration?: string;
}

/** One version of the projection. */
export interface ProjectedVersion {
  version: number;
  status: string;
  windowMin: string;
  windowMax: string;
  confidenceLevel: string;
  exceptionReason?: ExceptionReason;
  record: StatusRecord;
}

/** What the published accuracy keeps of a delivery (docs/prediction-quality.md "Quality"). */
export interface DeliveryOutcome {
  /** The UTC date the card was delivered (YYYY-MM-DD). */
  deliveredDate: string;
  /** Whether the delivery joined the model's history (db/transit-history.ts judgeServiceDelivery). */
  learned: boolean;
  /** Why it did not (empty when it did, and for a test-mode delivery). */
  notLearned: readonly NotLearnedReason[];
}

export interface DispatchChange {
  dispatch: DispatchRegistrationRow;
  /** Absent: only effects to record (carrier events that changed nothing). */
  projection?: ProjectedVersion;
  /** Effects of the carrier events folded since the last write, by dedupe key. */
  effects: ReadonlyArray<{ dedupeKey: string; effect: EventEffect }>;
  /** The webhook events of this version, with their exact body bytes; only with `projection`. */
  events: ReadonlyArray<{ type: WebhookEventType; body: Buffer }>;
  /** The events' timestamp (fixed by the workflow, identical in every body). */
  timestamp: string;
  /**
   * With the projection that makes the dispatch delivered: its outcome, kept only if this write
   * wrote the version and the row was not delivered before (never twice, whatever retries).
   */
  outcome?: DeliveryOutcome;
}

export interface DispatchChangeResult {
  /** False when the row already held this version or a newer one (a retry, or a late write), or when erased. */
  written: boolean;
  /** The dispatch's erasure was requested: nothing was written, and no delivery is answered. */
  erased: boolean;
  /** Every pending delivery of this version's events, in the events' order then by endpoint. */
  deliveries: Array<{ eventId: string; endpointId: string }>;
  /**
   * When not written: what the row holds (for a retry after a committed attempt, what that attempt
   * wrote, so the retry answers it rather than what it computed again).
   */
  current?: { version: number; windowMin: string; windowMax: string; confidenceLevel: string; record: StatusRecord };
}

const WRITE_CHANGE = `
WITH erased AS (
  SELECT 1 FROM erasures WHERE dispatch_id = $1
), inserted AS (
  INSERT INTO dispatches (id, issuer_id, mode, version, status, dispatch_date, postal_code, country_code, locale,
                          carrier, tracking_number, reference, registration, window_min, window_max,
                          confidence_level, exception_reason, record, area_code, area_prefix, tracking_key)
  SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::jsonb, $14, $15, $16, $17, $18::json, $32, $33, $34
   WHERE $4::bigint IS NOT NULL AND $13::jsonb IS NOT NULL AND NOT EXISTS (SELECT 1 FROM erased)
  ON CONFLICT (id) DO UPDATE SET
    version = EXCLUDED.version, status = EXCLUDED.status, window_min = EXCLUDED.window_min,
    window_max = EXCLUDED.window_max, confidence_level = EXCLUDED.confidence_level,
    exception_reason = EXCLUDED.exception_reason, record = EXCLUDED.record, updated_at = now()
  WHERE dispatches.version < EXCLUDED.version
  RETURNING 1
), updated AS (
  -- a later version, written without the registration: the row is there since the first
  UPDATE dispatches SET version = $4, status = $5, window_min = $14, window_max = $15, confidence_level = $16,
                        exception_reason = $17, record = $18::json, updated_at = now()
   WHERE id = $1 AND $4::bigint IS NOT NULL AND $13::jsonb IS NULL AND version < $4 AND NOT EXISTS (SELECT 1 FROM erased)
  RETURNING 1
), projected AS (
  SELECT 1 FROM inserted UNION ALL SELECT 1 FROM updated
), logged AS (
  -- only with the version (a retry finds it logged): never for a dispatch whose row is gone (erased)
  INSERT INTO prediction_log (dispatch_id, version, status, window_min, window_max, confidence_level)
  SELECT $1, $4, $5, $14, $15, $16 WHERE EXISTS (SELECT 1 FROM projected)
  ON CONFLICT (dispatch_id, version) DO NOTHING
), outcome AS (
  -- the statement's snapshot holds the row before this write: delivered there means kept already
  INSERT INTO prediction_outcomes (issuer_id, mode, country_code, dispatch_date, confidence_level, window_min, window_max,
                                   delivered_date, learned, not_learned_reasons)
  SELECT $2, $3, $8, ($6::timestamptz AT TIME ZONE 'UTC')::date, r.confidence_level, r.window_min, r.window_max, $28::date, $29, $30::text[]
    FROM prediction_log r
   WHERE $28::date IS NOT NULL AND r.dispatch_id = $1 AND r.version = 1 AND EXISTS (SELECT 1 FROM projected)
     AND NOT EXISTS (SELECT 1 FROM dispatches WHERE id = $1 AND status = 'delivered')
), effects AS (
  UPDATE carrier_events AS e SET effect = v.effect
    FROM unnest($19::text[], $20::text[]) AS v (dedupe_key, effect)
   WHERE e.dispatch_id = $1 AND e.dedupe_key = v.dedupe_key AND e.effect IS DISTINCT FROM v.effect
     AND NOT EXISTS (SELECT 1 FROM erased)
), input AS (
  SELECT * FROM unnest($21::text[], $22::text[], $23::text[], $24::bytea[]) WITH ORDINALITY AS i (id, type, idempotency_key, body, ord)
), created AS (
  INSERT INTO webhook_events (id, dispatch_id, issuer_id, mode, type, timestamp, body, idempotency_key)
  -- only with the version: a retry after a committed attempt creates nothing, whatever it decided again
  SELECT id, $1, $2, $3, type, $25, body, idempotency_key FROM input WHERE EXISTS (SELECT 1 FROM projected) ORDER BY ord
  ON CONFLICT DO NOTHING
  RETURNING id, type
), new_deliveries AS (
  -- born claimed by the dispatch's driver ($26), as its first delivery activity would claim them
  -- (attempt 1 marked sending unless the endpoint is throttled: db/webhooks.ts claimDelivery)
  INSERT INTO webhook_deliveries (event_id, endpoint_id, state, skipped_reason, driver, driver_due_at, sending_attempt)
  SELECT c.id, e.id, CASE WHEN e.paused_at IS NULL THEN 'pending' ELSE 'skipped' END,
         CASE WHEN e.paused_at IS NOT NULL THEN 'endpoint disabled' END,
         CASE WHEN e.paused_at IS NULL THEN $26::text END,
         CASE WHEN e.paused_at IS NULL THEN now() + $27::bigint * interval '1 millisecond' END,
         CASE WHEN e.paused_at IS NULL AND e.rate_limit IS NULL THEN 1 END
    FROM created c
    JOIN webhook_endpoints e ON e.issuer_id = $2 AND e.mode = $3 AND e.disabled_at IS NULL AND c.type = ANY (e.events)
  RETURNING event_id, endpoint_id, state
), handed AS (
  -- what the first attempt of each new pending delivery needs, read with the endpoint it was made for
  SELECT d.event_id, d.endpoint_id, i.type, e.url, e.events, e.secret, e.headers, e.rate_limit,
         CASE WHEN e.previous_secret_expires_at > now() THEN e.previous_secret END AS previous_secret,
         CASE WHEN e.previous_secret_expires_at > now() THEN e.signature_switch_at END AS signature_switch_at
    FROM new_deliveries d JOIN input i ON i.id = d.event_id JOIN webhook_endpoints e ON e.id = d.endpoint_id
   WHERE d.state = 'pending'
), pending AS (
  SELECT event_id, endpoint_id, type FROM new_deliveries JOIN input ON input.id = event_id WHERE state = 'pending'
  UNION ALL
  -- a retry of a committed write: the deliveries its first attempt made (invisible to new_deliveries),
  -- whichever events that attempt decided
  SELECT d.event_id, d.endpoint_id, w.type
    FROM webhook_events w JOIN webhook_deliveries d ON d.event_id = w.id
   WHERE w.dispatch_id = $1 AND starts_with(w.idempotency_key, $31::text) AND d.state = 'pending'
     AND NOT EXISTS (SELECT 1 FROM erased)
)
SELECT (SELECT count(*) FROM projected)::int AS written, EXISTS (SELECT 1 FROM erased) AS erased,
       coalesce((SELECT json_agg(json_build_object('eventId', p.event_id, 'endpointId', p.endpoint_id)
                                 ORDER BY array_position($22::text[], p.type), p.endpoint_id)
                   FROM pending p), '[]') AS deliveries,
       coalesce((SELECT json_agg(h) FROM handed h), '[]') AS handed,
       -- the row as this statement found it: when nothing was written, what an earlier attempt wrote
       (SELECT json_build_object('version', version, 'windowMin', window_min, 'windowMax', window_max,
                                 'confidenceLevel', confidence_level, 'record', record)
          FROM dispatches WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM projected) AND NOT EXISTS (SELECT 1 FROM erased)) AS current`;

/**
 * Writes one change of a dispatch in one transaction (see the header). Its new pending deliveries
 * are born claimed by `driver` (the dispatch's, temporal/contract.ts dispatchDriver), and `handed`
 * holds what their first attempts need.
 */
export async function writeDispatchChange(
  db: Pool | PoolClient,
  change: DispatchChange,
  driver: string,
): Promise<DispatchChangeResult & { handed: DeliveryToSend[] }> {
  const { dispatch: d, projection: p } = change;
  const events = p === undefined ? [] : change.events;
  const keys = events.map((event) => webhookEventKey(d.id, p!.version, event.type));
  const { rows } = await db.query<{
    written: number;
    erased: boolean;
    deliveries: Array<{ eventId: string; endpointId: string }>;
    handed: Array<Record<string, unknown>>;
    current: DispatchChangeResult['current'] | null;
  }>({
    name: 'dispatch-change-write-v2',
    text: WRITE_CHANGE,
    values: [
      d.id,
      d.issuerId,
      d.mode,
      p?.version ?? null,
      p?.status ?? null,
      d.dispatchDate,
      d.postalCode,
      d.countryCode,
      d.locale ?? null,
      d.carrier ?? null,
      d.trackingNumber ?? null,
      d.reference ?? null,
      d.registration ?? null,
      p?.windowMin ?? null,
      p?.windowMax ?? null,
      p?.confidenceLevel ?? null,
      p?.exceptionReason ?? null,
      p === undefined ? null : JSON.stringify(p.record),
      change.effects.map((e) => e.dedupeKey),
      change.effects.map((e) => e.effect),
      keys.map(webhookEventId),
      events.map((event) => event.type),
      keys,
      events.map((event) => event.body),
      change.timestamp,
      driver,
      DRIVER_RUN_BUDGET_MS,
      p === undefined ? null : (change.outcome?.deliveredDate ?? null),
      change.outcome?.learned ?? null,
      change.outcome?.notLearned ?? null,
      p === undefined ? null : `${d.id}:${p.version}:`,
      // The keys the row is found by (only the insert reads them): the history's of its postal code,
      // and tracking feeds' of its tracking number
      normalisePostalCode(d.postalCode, d.countryCode),
      postalPrefixOf(d.postalCode, d.countryCode),
      d.trackingNumber ? normaliseTrackingNumber(d.trackingNumber) : null,
    ],
  });
  // What claimDelivery would have read, read in this transaction: the first attempt needs no claim.
  const bodies = new Map(events.map((event) => [event.type, event.body]));
  const handed = rows[0].handed.map((h): DeliveryToSend => ({
    eventId: h.event_id as string,
    eventType: h.type as WebhookEventType,
    body: bodies.get(h.type as WebhookEventType)!,
    payloadExpired: false,
    state: 'pending',
    attempts: 0,
    endpoint: {
      id: h.endpoint_id as string,
      url: h.url as string,
      events: h.events as WebhookEventType[],
      disabled: false,
      paused: false,
      pausedReason: null,
      secrets: {
        current: h.secret as string,
        previous: (h.previous_secret as string | null) ?? undefined,
        switchAt: h.signature_switch_at ? new Date(h.signature_switch_at as string) : undefined,
      },
      headers: (h.headers as Record<string, string> | null) ?? {},
      rateLimit: (h.rate_limit as number | null) ?? null,
    },
  }));
  const { written, erased, deliveries, current } = rows[0];
  return { written: written === 1, erased, deliveries, handed, ...(written === 1 || current === null ? {} : { current }) };
}

/** The idempotency key of a dispatch version's event of one type. */
export function webhookEventKey(dispatchId: string, version: number, type: WebhookEventType): string {
  return `${dispatchId}:${version}:${type}`;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const EVENT_ID_CHARS = 16;

/**
 * The webhook event id of an idempotency key: `evt_` and 16 letters or digits, as every event id
 * (db/ids.ts newId), but derived from the key, so every attempt of a write names the same
 * event. Uniform characters by rejection sampling over the key's SHA-256 (chained while short).
 */
export function webhookEventId(key: string): string {
  let id = '';
  for (
    let digest = createHash('sha256').update(key).digest();
    id.length < EVENT_ID_CHARS;
    digest = createHash('sha256').update(digest).digest()
  ) {
    for (const byte of digest) if (byte < 248 && id.length < EVENT_ID_CHARS) id += BASE62[byte % 62];
  }
  return `evt_${id}`;
}
