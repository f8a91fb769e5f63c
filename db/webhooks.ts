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
  /** When the last recorded attempt started (the worker's clock); none for a new delivery handed over. */
  lastAttemptAt?: Date;
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
 * attempt is numbered after the last one and the schedule goes on from there. An attempt the
 * driver it takes over from may still be sending (`sending_attempt`, within that driver's run
 * budget) counts as made: the replay's is numbered after it, and when it was the cycle's last
 * (`lastAttempt`) the replay starts a new cycle, so no number is sent twice and no cycle has more.
 */
export interface DriverClaim {
  driver: string;
  takeOver: boolean;
  /** The number of a cycle's last attempt: the retry schedule's length + 1. */
  lastAttempt: number;
}

/** How long a run may hold a delivery before it must touch it again (above the activity's startToCloseTimeout + retry pacing). */
export const DRIVER_RUN_BUDGET_MS = 2 * 60_000;

// The parts of the claim's statement ($3 the driver, $4 takeOver, $6 the cycle's last attempt number).
/** The claim takes the delivery from another driver (a replay's). */
const TAKES = `($4 AND d.driver IS DISTINCT FROM $3)`;
/** The attempt the driver taken from may still be sending (its run budget is not past); 0: none. */
const IN_FLIGHT = `CASE WHEN d.driver_due_at > now() THEN coalesce(d.sending_attempt, 0) ELSE 0 END`;
/** The take starts a new cycle: the delivery is settled, or the attempt in flight is its cycle's last. */
const RENEWS = `(${TAKES} AND (d.state <> 'pending' OR ${IN_FLIGHT} >= $6))`;
const CLAIMED_ATTEMPTS = `CASE WHEN ${RENEWS} THEN 0 WHEN ${TAKES} THEN greatest(d.attempts, ${IN_FLIGHT}) ELSE d.attempts END`;
/** A throttled endpoint's attempt is marked sending after its wait instead (holdForSending). */
const SENDS_NOW = `((${RENEWS} OR d.state = 'pending') AND NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = $2 AND rate_limit IS NOT NULL))`;

/**
 * Claims the delivery for `claim.driver` and loads what one attempt needs, in one statement; the
 * attempt it will send (attempts + 1) is marked sending, unless its endpoint is throttled.
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
    name: 'webhook-delivery-claim-v7',
    text: `WITH claimed AS (
       UPDATE webhook_deliveries d
          SET driver = $3, driver_due_at = now() + $5 * interval '1 millisecond',
              state = CASE WHEN ${RENEWS} THEN 'pending' ELSE d.state END,
              attempts = ${CLAIMED_ATTEMPTS},
              skipped_reason = CASE WHEN ${RENEWS} THEN NULL ELSE d.skipped_reason END,
              sending_attempt = CASE WHEN ${SENDS_NOW} THEN ${CLAIMED_ATTEMPTS} + 1 END
        WHERE d.event_id = $1 AND d.endpoint_id = $2 AND ($4 OR d.driver IS NULL OR d.driver = $3)
          AND NOT EXISTS (SELECT 1 FROM webhook_events ev JOIN erasures x ON x.dispatch_id = ev.dispatch_id WHERE ev.id = d.event_id)
        RETURNING d.state, d.attempts, d.last_attempt_at
     )
     SELECT ev.type, ev.body, ev.payload_expired_at IS NOT NULL AS payload_expired, c.state, c.attempts, c.last_attempt_at, e.url, e.events, e.disabled_at IS NOT NULL AS disabled,
            e.paused_at IS NOT NULL AS paused, e.paused_reason, e.secret, e.headers, e.rate_limit,
            CASE WHEN e.previous_secret_expires_at > now() THEN e.previous_secret END AS previous_secret,
            CASE WHEN e.previous_secret_expires_at > now() THEN e.signature_switch_at END AS signature_switch_at
       FROM claimed c
       JOIN webhook_events ev ON ev.id = $1
       JOIN webhook_endpoints e ON e.id = $2`,
    values: [eventId, endpointId, claim.driver, claim.takeOver, DRIVER_RUN_BUDGET_MS, claim.lastAttempt],
  });
  const row = rows[0];
  if (!row) return (await deliveryExists(db, eventId, endpointId)) ? 'superseded' : undefined;
  return deliveryToSend(eventId, endpointId, row);
}

/**
 * Right before a throttled attempt is sent, after its wait: whether `driver` still holds the
 * pending delivery (a replay may have taken it over meanwhile) and its dispatch's erasure was not
 * requested; then `attempt` is marked sending (see claimDelivery). `superseded`: another driver holds
 * it, or it settled; undefined: it is gone or being erased. Nothing is sent unless `sending`.
 */
export async function holdForSending(
  db: Db,
  delivery: { eventId: string; endpointId: string; driver: string; attempt: number },
): Promise<'sending' | 'superseded' | undefined> {
  const { rowCount } = await db.query(
    `UPDATE webhook_deliveries d SET sending_attempt = $4
      WHERE d.event_id = $1 AND d.endpoint_id = $2 AND d.driver = $3 AND d.state = 'pending'
        AND NOT EXISTS (SELECT 1 FROM webhook_events ev JOIN erasures x ON x.dispatch_id = ev.dispatch_id WHERE ev.id = d.event_id)`,
    [delivery.eventId, delivery.endpointId, delivery.driver, delivery.attempt],
  );
  if (rowCount) return 'sending';
  return (await deliveryExists(db, delivery.eventId, delivery.endpointId)) ? 'superseded' : undefined;
}

/** The delivery exists and its dispatch's erasure was not requested. */
async function deliveryExists(db: Db, eventId: string, endpointId: string): Promise<boolean> {
  const exists = await db.query(
    `SELECT 1 FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
      WHERE d.event_id = $1 AND d.endpoint_id = $2 AND ${notErased('ev.dispatch_id')}`,
    [eventId, endpointId],
  );
  return (exists.rowCount ?? 0) > 0;
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
 * delivery over meanwhile: the attempt is logged, and the delivery's counters and state are left
 * to the new driver (whose claim counted this attempt as made, see claimDelivery). Nothing is
 * logged for a delivery that is gone (its dispatch erased meanwhile: delivery_attempts has no
 * foreign key to keep such a row out).
 */
export async function recordDeliveryAttempt(db: Db, record: AttemptRecord): Promise<boolean> {
  const driving = `($11::text IS NULL OR driver = $11)`;
  const { rows } = await db.query({
    name: 'delivery-attempt-record-v2',
    text: `WITH delivery AS (
       UPDATE webhook_deliveries
          SET attempts = CASE WHEN ${driving} THEN attempts + 1 ELSE attempts END,
              last_attempt_at = CASE WHEN ${driving} THEN $4 ELSE last_attempt_at END,
              state = CASE WHEN ${driving} THEN $9 ELSE state END,
              driver_due_at = CASE WHEN ${driving} THEN now() + ($12::bigint + $13) * interval '1 millisecond' ELSE driver_due_at END,
              sending_attempt = CASE WHEN ${driving} THEN NULL ELSE sending_attempt END
        WHERE event_id = $1 AND endpoint_id = $2
        RETURNING ${driving} AS driving
     ), attempt AS (
       INSERT INTO delivery_attempts (event_id, endpoint_id, attempt, started_at, duration_ms, status_code, error, response_head,
                                      state_after, request_headers)
       SELECT $1, $2, $3::int, $4::timestamptz, $5::int, $6::int, $7::text, $8::bytea, $9::text, $10::jsonb FROM delivery
     ), healthy AS (
       -- a success ends the endpoint's failing streak (docs/webhooks.md "Auto-disable"); no row when none runs
       UPDATE webhook_endpoints SET failing_since = NULL, failing_since_temporal = NULL
        WHERE id = $2 AND $9 = 'delivered' AND failing_since IS NOT NULL
     )
     SELECT driving FROM delivery`,
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
  await db.query(
    `UPDATE webhook_deliveries SET state = 'skipped', skipped_reason = $3, sending_attempt = NULL WHERE event_id = $1 AND endpoint_id = $2`,
    [eventId, endpointId, reason],
  );
}

/** The columns claimDelivery selects. */
interface DeliveryRow {
  type: WebhookEventType;
  body: Buffer;
  payload_expired: boolean;
  state: DeliveryState;
  attempts: number;
  last_attempt_at: Date | null;
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
    lastAttemptAt: row.last_attempt_at ?? undefined,
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
