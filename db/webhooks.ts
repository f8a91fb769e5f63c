// Step 8, the last, of a carrier event's path (docs/architecture.md "The path of one carrier
// event"): the SQL of activities/webhook-delivery.ts (step 7).
// Tables: webhook_deliveries, delivery_attempts (the writes), and webhook_endpoints' failing streak
// ended by a success; erasures read (a delivery of a dispatch being erased is not claimed). A
// dispatch's events and deliveries are created with its change (db/dispatch-changes.ts); here a
// delivery is claimed, each attempt recorded and the delivery settled (docs/webhooks.md). Beside
// it: the throttle's slots (db/endpoint-throttle.ts), endpoint health (db/endpoint-health.ts); the
// reads for people in db/delivery-log.ts and db/delivery-summaries.ts; endpoints in
// db/webhook-endpoints.ts; replays in db/webhook-replays.ts.
import type { WebhookEventType } from '../domain/vocabulary.js';
import { notErased } from './dispatches.js';
import type { Pool, PoolClient } from './pool.js';
import type { EndpointSecrets } from '../domain/signing.js';

type Db = Pool | PoolClient;

export type DeliveryState = 'pending' | 'delivered' | 'undeliverable' | 'skipped';

// ---------- deliveries (the delivery activity and the CLI) ----------

export interface DeliveryToSend {
  eventId: string;
  eventType: WebhookEventType;
  body: Buffer;
  /** The retention window cleared the body (docs/privacy.md): nothing can be sent. */
  payloadExpired: boolean;
  state: DeliveryState;
  attempts: number;
  /** `disabled`: removed; `paused`: disabled from the dashboard. */
  endpoint: {
    id: string;
    url: string;
    events: WebhookEventType[];
    disabled: boolean;
    paused: boolean;
    /** Why it is paused: `manual` (the API, the dashboard) or `failing` (auto-disabled). */
    pausedReason: 'manual' | 'failing' | null;
    secrets: EndpointSecrets;
    /** The endpoint's custom headers (the API's `headers`): sent, never logged or recorded. */
    headers: Record<string, string>;
    /** Deliveries per second to this endpoint, across every worker (claimSendSlot); null: unlimited. */
    rateLimit: number | null;
  };
}

/**
 * Who drives a delivery (docs/webhooks.md): `own` claims it only when nobody else drives it (the
 * dispatch workflow's activity, or a reconciler run that already claimed it); `replay` takes it
 * over from any other driver. A replay that takes over a settled delivery starts a new cycle
 * (pending, 0 attempts); one that takes over a waiting retry keeps its attempts, so the next
 * attempt is numbered after the last one and the schedule goes on from there.
 */
export interface DriverClaim {
  driver: string;
  takeOver: boolean;
}

/** How long a run may hold a delivery before it must touch it again (above the activity's startToCloseTimeout + retry pacing). */
export const DRIVER_RUN_BUDGET_MS = 2 * 60_000;

/**
 * Claims the delivery for `claim.driver` and loads what one attempt needs, in one statement.
 * `superseded`: another driver holds it; undefined: no such delivery, or one of a dispatch whose
 * erasure was requested (its body holds the card's record: from the request on nothing sends it,
 * docs/privacy.md "Erasure", though its rows stay until the erasure's workflow removes them).
 */
export async function claimDelivery(
  db: Db,
  eventId: string,
  endpointId: string,
  claim: DriverClaim,
): Promise<DeliveryToSend | 'superseded' | undefined> {
  const { rows } = await db.query({
    name: 'webhook-delivery-claim-v5',
    text: `WITH claimed AS (
       UPDATE webhook_deliveries d
          SET driver = $3, driver_due_at = now() + $5 * interval '1 millisecond',
              state = CASE WHEN $4 AND d.driver IS DISTINCT FROM $3 AND d.state <> 'pending' THEN 'pending' ELSE d.state END,
              attempts = CASE WHEN $4 AND d.driver IS DISTINCT FROM $3 AND d.state <> 'pending' THEN 0 ELSE d.attempts END,
              skipped_reason = CASE WHEN $4 AND d.driver IS DISTINCT FROM $3 AND d.state <> 'pending' THEN NULL ELSE d.skipped_reason END
        WHERE d.event_id = $1 AND d.endpoint_id = $2 AND ($4 OR d.driver IS NULL OR d.driver = $3)
          AND NOT EXISTS (SELECT 1 FROM webhook_events ev JOIN erasures x ON x.dispatch_id = ev.dispatch_id WHERE ev.id = d.event_id)
        RETURNING d.state, d.attempts
     )
     SELECT ev.type, ev.body, ev.payload_expired_at IS NOT NULL AS payload_expired, c.state, c.attempts, e.url, e.events, e.disabled_at IS NOT NULL AS disabled,
            e.paused_at IS NOT NULL AS paused, e.paused_reason, e.secret, e.headers, e.rate_limit,
            CASE WHEN e.previous_secret_expires_at > now() THEN e.previous_secret END AS previous_secret,
            CASE WHEN e.previous_secret_expires_at > now() THEN e.signature_switch_at END AS signature_switch_at
       FROM claimed c
       JOIN webhook_events ev ON ev.id = $1
       JOIN webhook_endpoints e ON e.id = $2`,
    values: [eventId, endpointId, claim.driver, claim.takeOver, DRIVER_RUN_BUDGET_MS],
  });
  const row = rows[0];
  if (!row) {
    const exists = await db.query(
      `SELECT 1 FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
        WHERE d.event_id = $1 AND d.endpoint_id = $2 AND ${notErased('ev.dispatch_id')}`,
      [eventId, endpointId],
    );
    return exists.rowCount ? 'superseded' : undefined;
  }
  return deliveryToSend(eventId, endpointId, row);
}

/**
 * The reconciler's claim (docs/webhooks.md): pending deliveries whose driver should have touched them
 * more than `graceMs` ago (`driver_due_at`, or the creation time of one never claimed) have no
 * running driver; up to `limit` of them, oldest first, pass to `driver`, which must start driving
 * them within the run budget (or they are found again).
 */
export async function claimOrphanedDeliveries(
  db: Db,
  options: { driver: string; graceMs: number; limit: number },
): Promise<Array<{ eventId: string; endpointId: string }>> {
  const { rows } = await db.query<{ event_id: string; endpoint_id: string }>(
    `UPDATE webhook_deliveries d SET driver = $1, driver_due_at = now() + $4 * interval '1 millisecond'
      WHERE (d.event_id, d.endpoint_id) IN (
        SELECT event_id, endpoint_id FROM webhook_deliveries
         WHERE state = 'pending' AND coalesce(driver_due_at, created_at) < now() - $2 * interval '1 millisecond'
         ORDER BY coalesce(driver_due_at, created_at) LIMIT $3 FOR UPDATE SKIP LOCKED)
      RETURNING d.event_id, d.endpoint_id`,
    [options.driver, options.graceMs, options.limit, DRIVER_RUN_BUDGET_MS],
  );
  return rows.map((row) => ({ eventId: row.event_id, endpointId: row.endpoint_id })).sort((a, b) => a.eventId.localeCompare(b.eventId));
}

export interface AttemptRecord {
  eventId: string;
  endpointId: string;
  attempt: number;
  startedAt: Date;
  durationMs: number;
  statusCode?: number;
  error?: string;
  responseHead?: Buffer;
  /** The headers the request was sent with (signatures included; never a secret); absent when nothing was sent. */
  requestHeaders?: Record<string, string>;
  /** The delivery's state after this attempt: delivered, still pending (a retry follows) or undeliverable. */
  state: Exclude<DeliveryState, 'skipped'>;
  /** The driver that sent it: the state moves only while it still drives the delivery. */
  driver?: string;
  /** Pending only: the wait before the next attempt (the driver touches the row again by then + the run budget). */
  retryDelayMs?: number;
}

/**
 * Logs one attempt and moves the delivery's counters and state, in one statement; a delivered
 * attempt also ends its endpoint's failing streak there. False when another driver took the
 * delivery over meanwhile (the attempt is logged, its state left to the new driver).
 */
export async function recordDeliveryAttempt(db: Db, record: AttemptRecord): Promise<boolean> {
  const { rows } = await db.query({
    name: 'delivery-attempt-record',
    text: `WITH attempt AS (
       INSERT INTO delivery_attempts (event_id, endpoint_id, attempt, started_at, duration_ms, status_code, error, response_head,
                                      state_after, request_headers)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ), healthy AS (
       -- a success ends the endpoint's failing streak (docs/webhooks.md "Auto-disable"); no row when none runs
       UPDATE webhook_endpoints SET failing_since = NULL, failing_since_temporal = NULL
        WHERE id = $2 AND $9 = 'delivered' AND failing_since IS NOT NULL
     )
     UPDATE webhook_deliveries
        SET attempts = attempts + 1, last_attempt_at = $4,
            state = CASE WHEN $11::text IS NULL OR driver = $11 THEN $9 ELSE state END,
            driver_due_at = CASE WHEN $11::text IS NULL OR driver = $11 THEN now() + ($12::bigint + $13) * interval '1 millisecond' ELSE driver_due_at END
      WHERE event_id = $1 AND endpoint_id = $2
      RETURNING $11::text IS NULL OR driver = $11 AS driving`,
    values: [
      record.eventId,
      record.endpointId,
      record.attempt,
      record.startedAt,
      Math.round(record.durationMs),
      record.statusCode ?? null,
      record.error ?? null,
      record.responseHead ?? null,
      record.state,
      record.requestHeaders ? JSON.stringify(record.requestHeaders) : null,
      record.driver ?? null,
      record.retryDelayMs ?? 0,
      DRIVER_RUN_BUDGET_MS,
    ],
  });
  return rows[0]?.driving ?? false;
}

export async function markDeliverySkipped(db: Db, eventId: string, endpointId: string, reason: string): Promise<void> {
  await db.query(`UPDATE webhook_deliveries SET state = 'skipped', skipped_reason = $3 WHERE event_id = $1 AND endpoint_id = $2`, [
    eventId,
    endpointId,
    reason,
  ]);
}

/** The columns claimDelivery selects. */
interface DeliveryRow {
  type: WebhookEventType;
  body: Buffer;
  payload_expired: boolean;
  state: DeliveryState;
  attempts: number;
  url: string;
  events: WebhookEventType[];
  disabled: boolean;
  paused: boolean;
  paused_reason: 'manual' | 'failing' | null;
  secret: string;
  previous_secret: string | null;
  signature_switch_at: Date | null;
  headers: Record<string, string>;
  rate_limit: number | null;
}

/** A claimed delivery row as what an attempt needs. */
function deliveryToSend(eventId: string, endpointId: string, row: DeliveryRow): DeliveryToSend {
  return {
    eventId,
    eventType: row.type,
    body: row.body,
    payloadExpired: row.payload_expired,
    state: row.state,
    attempts: row.attempts,
    endpoint: {
      id: endpointId,
      url: row.url,
      events: row.events,
      disabled: row.disabled,
      paused: row.paused,
      pausedReason: row.paused_reason,
      secrets: { current: row.secret, previous: row.previous_secret ?? undefined, switchAt: row.signature_switch_at ?? undefined },
      headers: row.headers,
      rateLimit: row.rate_limit,
    },
  };
}
