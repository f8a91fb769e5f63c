// Step 8, the last, of a carrier event's path (docs/architecture.md "The path of one carrier
// event"): the SQL of activities/webhook-delivery.ts (step 7).
// Tables: webhook_deliveries, delivery_attempts, webhook_endpoints' health (the writes). Webhook
// events and their deliveries
// (docs/webhooks.md): a dispatch's events and deliveries are created with its change
// (db/dispatch-changes.ts); the delivery activity claims what to send, records each attempt,
// settles the delivery and keeps its endpoint's health. Their reads for people (delivery log, endpoint
// health, a dispatch's events, the CLI's list) are in db/delivery-log.ts; endpoints in
// db/webhook-endpoints.ts; replays in db/webhook-replays.ts.
import type { WebhookEventType } from '../domain/vocabulary.js';
import { buildEndpointDisabledBody } from '../domain/webhook-payload.js';
import { newId } from './ids.js';
import type { Pool, PoolClient } from './pool.js';
import type { EndpointSecrets } from '../domain/signing.js';
import { TEST_EVENT_DISPATCH_ID } from '../domain/sample-event.js';

type Db = Pool | PoolClient;

export type DeliveryState = 'pending' | 'delivered' | 'undeliverable' | 'skipped';

// ---------- deliveries (the delivery activity and the CLI) ----------

export interface DeliveryToSend {
  eventId: string;
  eventType: WebhookEventType;
  body: Buffer;
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
 * `superseded`: another driver holds it; undefined: no such delivery.
 */
export async function claimDelivery(
  db: Db,
  eventId: string,
  endpointId: string,
  claim: DriverClaim,
): Promise<DeliveryToSend | 'superseded' | undefined> {
  const { rows } = await db.query({
    name: 'webhook-delivery-claim-v3',
    text: `WITH claimed AS (
       UPDATE webhook_deliveries d
          SET driver = $3, driver_due_at = now() + $5 * interval '1 millisecond',
              state = CASE WHEN $4 AND d.driver IS DISTINCT FROM $3 AND d.state <> 'pending' THEN 'pending' ELSE d.state END,
              attempts = CASE WHEN $4 AND d.driver IS DISTINCT FROM $3 AND d.state <> 'pending' THEN 0 ELSE d.attempts END,
              skipped_reason = CASE WHEN $4 AND d.driver IS DISTINCT FROM $3 AND d.state <> 'pending' THEN NULL ELSE d.skipped_reason END
        WHERE d.event_id = $1 AND d.endpoint_id = $2 AND ($4 OR d.driver IS NULL OR d.driver = $3)
        RETURNING d.state, d.attempts
     )
     SELECT ev.type, ev.body, c.state, c.attempts, e.url, e.events, e.disabled_at IS NOT NULL AS disabled,
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
    const exists = await db.query('SELECT 1 FROM webhook_deliveries WHERE event_id = $1 AND endpoint_id = $2', [eventId, endpointId]);
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

/**
 * The per-endpoint throttle (docs/webhooks.md "Throttle"): claims the endpoint's next free send time,
 * `greatest(now, next_at)`, and moves `next_at` 1/rate past it, in one atomic upsert, so every worker
 * process shares one window per endpoint (the database's clock, not the workers', decides). A slot
 * more than `maxWaitMs` away is not claimed: `granted` is false and `waitMs` says how far the next
 * free slot is, so the caller can come back later instead of holding its run.
 */
export async function claimSendSlot(
  db: Db,
  endpointId: string,
  ratePerSecond: number,
  maxWaitMs: number,
): Promise<{ granted: boolean; waitMs: number }> {
  const gapMs = 1000 / ratePerSecond;
  const { rows } = await db.query<{ wait_ms: number }>({
    name: 'webhook-send-slot-claim',
    text: `INSERT INTO webhook_endpoint_send_slots AS s (endpoint_id, next_at)
           VALUES ($1, clock_timestamp() + $2::double precision * interval '1 millisecond')
           ON CONFLICT (endpoint_id) DO UPDATE
              SET next_at = greatest(clock_timestamp(), s.next_at) + $2::double precision * interval '1 millisecond'
            WHERE s.next_at <= clock_timestamp() + $3::double precision * interval '1 millisecond'
           RETURNING (1000 * extract(epoch FROM s.next_at - $2::double precision * interval '1 millisecond' - clock_timestamp()))::float8 AS wait_ms`,
    values: [endpointId, gapMs, maxWaitMs],
  });
  if (rows[0]) return { granted: true, waitMs: Math.max(0, rows[0].wait_ms) };
  const next = await db.query<{ wait_ms: number }>(
    `SELECT (1000 * extract(epoch FROM next_at - clock_timestamp()))::float8 AS wait_ms FROM webhook_endpoint_send_slots WHERE endpoint_id = $1`,
    [endpointId],
  );
  return { granted: false, waitMs: Math.max(0, next.rows[0]?.wait_ms ?? 0) };
}

/**
 * A throttled delivery whose run ends without an attempt (its slot was too far away): its driver
 * comes back after `delayMs`, so the reconciler must not think it orphaned before then + the run budget.
 */
export async function deferDelivery(db: Db, eventId: string, endpointId: string, driver: string, delayMs: number): Promise<void> {
  await db.query(
    `UPDATE webhook_deliveries SET driver_due_at = now() + ($4::bigint + $5) * interval '1 millisecond'
      WHERE event_id = $1 AND endpoint_id = $2 AND driver = $3`,
    [eventId, endpointId, driver, Math.round(delayMs), DRIVER_RUN_BUDGET_MS],
  );
}

/** An endpoint auto-disabled by pauseFailingEndpoint, and the webhook_endpoint.disabled deliveries it made (to start). */
export interface EndpointAutoDisabled {
  endpointId: string;
  disabledAt: Date;
  eventId: string;
  deliveries: Array<{ eventId: string; endpointId: string }>;
}

/** An endpoint's failing streak as a failed attempt leaves it. */
export interface FailingStreak {
  url: string;
  /** Temporal's time of the streak's first failed attempt. */
  since: Date;
  /** Already paused (by hand, or by an earlier attempt of the streak). */
  paused: boolean;
}

/**
 * Records a failed attempt in the endpoint's health (docs/webhooks.md "Auto-disable"): the first
 * failure since the last success starts the streak, storing both clocks. `at` (the attempt's wall
 * clock) is what `failing_since` stores, which the API and the dashboard show; `clock` is Temporal's
 * time of the attempt, stored in `failing_since_temporal`, on which the streak is measured (so the
 * time-skipping test server moves it). Undefined for a removed endpoint. A success ends the streak
 * in recordDeliveryAttempt's statement.
 */
export async function recordEndpointFailure(
  db: Db,
  input: { endpointId: string; at: Date; clock: Date },
): Promise<FailingStreak | undefined> {
  // SET reads the columns' old values: the first failure records both clocks.
  const { rows } = await db.query<{ url: string; failing_since_temporal: Date; paused: boolean }>(
    `UPDATE webhook_endpoints
        SET failing_since = coalesce(failing_since, $2),
            failing_since_temporal = CASE WHEN failing_since IS NULL THEN $3 ELSE failing_since_temporal END
      WHERE id = $1 AND disabled_at IS NULL
     RETURNING url, failing_since_temporal, paused_at IS NOT NULL AS paused`,
    [input.endpointId, input.at, input.clock],
  );
  const row = rows[0];
  return row && { url: row.url, since: row.failing_since_temporal, paused: row.paused };
}

/**
 * Pauses an endpoint whose failing streak the caller judged long enough, with the reason `failing`,
 * and in the same statement stores the `webhook_endpoint.disabled` event with one pending delivery
 * to each of the issuer's other enabled endpoints of that mode that subscribe to it (the caller
 * starts them; the reconciler would otherwise). Only while it is still the streak that was judged
 * (a success in between ended it) and nobody paused it first; undefined otherwise.
 */
export async function pauseFailingEndpoint(
  db: Db,
  input: { endpointId: string; streak: FailingStreak; disabledAt: Date },
): Promise<EndpointAutoDisabled | undefined> {
  const eventId = newId('evt');
  const timestamp = input.disabledAt.toISOString();
  const body = buildEndpointDisabledBody(timestamp, { id: input.endpointId, url: input.streak.url, disabled_reason: 'failing', disabled_at: timestamp }); // prettier-ignore
  const { rows } = await db.query<{ disabled: boolean; endpoint_ids: string[] }>(
    `WITH disabled AS (
       UPDATE webhook_endpoints SET paused_at = $2, paused_reason = 'failing'
        WHERE id = $1 AND paused_at IS NULL AND disabled_at IS NULL AND failing_since_temporal = $3
       RETURNING issuer_id, mode
     ), event AS (
       INSERT INTO webhook_events (id, dispatch_id, issuer_id, mode, type, timestamp, body)
       SELECT $4, $5, issuer_id, mode, 'webhook_endpoint.disabled', $2, $6 FROM disabled
       RETURNING id, issuer_id, mode
     ), deliveries AS (
       INSERT INTO webhook_deliveries (event_id, endpoint_id)
       SELECT event.id, e.id FROM event
         JOIN webhook_endpoints e ON e.issuer_id = event.issuer_id AND e.mode = event.mode AND e.id <> $1
                                 AND e.disabled_at IS NULL AND e.paused_at IS NULL AND 'webhook_endpoint.disabled' = ANY (e.events)
       RETURNING endpoint_id
     )
     SELECT EXISTS (SELECT 1 FROM disabled) AS disabled,
            coalesce((SELECT array_agg(endpoint_id ORDER BY endpoint_id) FROM deliveries), '{}') AS endpoint_ids`,
    [input.endpointId, input.disabledAt, input.streak.since, eventId, TEST_EVENT_DISPATCH_ID, Buffer.from(body, 'utf8')],
  );
  if (!rows[0]?.disabled) return undefined;
  return {
    endpointId: input.endpointId,
    disabledAt: input.disabledAt,
    eventId,
    deliveries: rows[0].endpoint_ids.map((endpointId) => ({ eventId, endpointId })),
  };
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
