// Webhook events and their deliveries (DESIGN.md "Webhooks"). Callers: the projection activity
// (`createWebhookEvents`: body built once, one delivery per subscribed endpoint), the delivery
// activity (load what to send, record each attempt, settle the delivery) and the admin CLI's
// delivery list. Endpoints themselves live in db/webhook-endpoints.ts.
import { newId } from './issuers.js';
import type { Pool, PoolClient } from './pool.js';
import type { EndpointSecrets } from '../domain/signing.js';
import { buildWebhookBody } from '../domain/webhook-payload.js';
import type { StatusRecord } from '../domain/schemas.js';
import type { WebhookEventType } from '../domain/state-machine.js';

type Db = Pool | PoolClient;

export type DeliveryState = 'pending' | 'delivered' | 'undeliverable' | 'skipped';

// ---------- webhook events (from the dispatch workflow's projection activity) ----------

export interface NewWebhookEvent {
  type: WebhookEventType;
  /** ISO 8601, fixed now and identical on every attempt. */
  timestamp: string;
  data: StatusRecord;
  /** Deterministic per event, e.g. `<dispatchId>:<version>:<type>`: a repeat returns the rows it made. */
  idempotencyKey?: string;
}

/**
 * Stores each event's body once and one pending delivery per endpoint of the issuer, of the
 * dispatch's mode, that subscribed to its type, in one statement (all or nothing). Returns the (event, endpoint) pairs to
 * deliver, in input order. A paused (disabled) endpoint gets its delivery already `skipped`, so
 * nothing is sent, yet a replay of the time range can recover the event once it is enabled again. Events whose idempotency key already exists are not created again: their
 * existing deliveries are returned (endpoints added since are not added to an old event).
 */
export async function createWebhookEvents(
  db: Db,
  input: { dispatchId: string; issuerId: string; mode: 'live' | 'test'; events: NewWebhookEvent[] },
): Promise<Array<{ eventId: string; endpointId: string }>> {
  if (input.events.length === 0) return [];
  const ids = input.events.map(() => newId('evt'));
  const bodies = input.events.map((event) => Buffer.from(buildWebhookBody(event), 'utf8'));
  const { rows } = await db.query<{ event_id: string; endpoint_id: string }>({
    name: 'webhook-events-create',
    text: `WITH input AS (
       SELECT * FROM unnest($4::text[], $5::text[], $6::timestamptz[], $7::bytea[], $8::text[]) WITH ORDINALITY
                      AS i (id, type, timestamp, body, idempotency_key, ord)
     ), created AS (
       INSERT INTO webhook_events (id, dispatch_id, issuer_id, mode, type, timestamp, body, idempotency_key)
       SELECT id, $1, $2, $3, type, timestamp, body, idempotency_key FROM input ORDER BY ord
       ON CONFLICT (idempotency_key) DO NOTHING
       RETURNING id, type
     ), new_deliveries AS (
       INSERT INTO webhook_deliveries (event_id, endpoint_id, state, skipped_reason)
       SELECT c.id, e.id, CASE WHEN e.paused_at IS NULL THEN 'pending' ELSE 'skipped' END,
              CASE WHEN e.paused_at IS NOT NULL THEN 'endpoint disabled' END
         FROM created c
         JOIN webhook_endpoints e ON e.issuer_id = $2 AND e.mode = $3 AND e.disabled_at IS NULL AND c.type = ANY (e.events)
       RETURNING event_id, endpoint_id, state
     )
     SELECT d.event_id, d.endpoint_id, i.ord FROM new_deliveries d JOIN input i ON i.id = d.event_id WHERE d.state = 'pending'
     UNION ALL
     SELECT d.event_id, d.endpoint_id, i.ord FROM input i
       JOIN webhook_events ev ON ev.idempotency_key = i.idempotency_key AND ev.id <> i.id
       JOIN webhook_deliveries d ON d.event_id = ev.id
     ORDER BY ord, endpoint_id`,
    values: [
      input.dispatchId,
      input.issuerId,
      input.mode,
      ids,
      input.events.map((event) => event.type),
      input.events.map((event) => event.timestamp),
      bodies,
      input.events.map((event) => event.idempotencyKey ?? null),
    ],
  });
  return rows.map((row) => ({ eventId: row.event_id, endpointId: row.endpoint_id }));
}

// ---------- deliveries (the delivery activity and the CLI) ----------

export interface DeliveryToSend {
  eventId: string;
  eventType: WebhookEventType;
  body: Buffer;
  state: DeliveryState;
  attempts: number;
  /** `disabled`: removed; `paused`: disabled from the dashboard. */
  endpoint: { id: string; url: string; events: WebhookEventType[]; disabled: boolean; paused: boolean; secrets: EndpointSecrets };
}

/** What one delivery attempt needs; undefined when there is no such delivery. */
export async function loadDelivery(db: Db, eventId: string, endpointId: string): Promise<DeliveryToSend | undefined> {
  const { rows } = await db.query({
    name: 'webhook-delivery-load',
    text: `SELECT ev.type, ev.body, d.state, d.attempts, e.url, e.events, e.disabled_at IS NOT NULL AS disabled,
            e.paused_at IS NOT NULL AS paused, e.secret,
            CASE WHEN e.previous_secret_expires_at > now() THEN e.previous_secret END AS previous_secret,
            CASE WHEN e.previous_secret_expires_at > now() THEN e.signature_switch_at END AS signature_switch_at
       FROM webhook_deliveries d
       JOIN webhook_events ev ON ev.id = d.event_id
       JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE d.event_id = $1 AND d.endpoint_id = $2`,
    values: [eventId, endpointId],
  });
  const row = rows[0];
  if (!row) return undefined;
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
      secrets: { current: row.secret, previous: row.previous_secret ?? undefined, switchAt: row.signature_switch_at ?? undefined },
    },
  };
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
}

/** Logs one attempt and moves the delivery's counters and state, in one statement. */
export async function recordDeliveryAttempt(db: Db, record: AttemptRecord): Promise<void> {
  await db.query({
    name: 'delivery-attempt-record',
    text: `WITH attempt AS (
       INSERT INTO delivery_attempts (event_id, endpoint_id, attempt, started_at, duration_ms, status_code, error, response_head,
                                      state_after, request_headers)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     )
     UPDATE webhook_deliveries SET attempts = attempts + 1, last_attempt_at = $4, state = $9
      WHERE event_id = $1 AND endpoint_id = $2`,
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
    ],
  });
}

export async function markDeliverySkipped(db: Db, eventId: string, endpointId: string, reason: string): Promise<void> {
  await db.query(`UPDATE webhook_deliveries SET state = 'skipped', skipped_reason = $3 WHERE event_id = $1 AND endpoint_id = $2`, [
    eventId,
    endpointId,
    reason,
  ]);
}

export interface DeliverySummary {
  eventId: string;
  endpointId: string;
  event: WebhookEventType;
  state: DeliveryState;
  attempts: number;
  lastAttemptAt: Date | null;
}

/** Deliveries, newest first. */
export async function listDeliveries(
  db: Db,
  filter: { undeliverable?: boolean; endpointId?: string; limit?: number } = {},
): Promise<DeliverySummary[]> {
  const { rows } = await db.query(
    `SELECT d.event_id, d.endpoint_id, ev.type, d.state, d.attempts, d.last_attempt_at
       FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
      WHERE ($1::boolean IS NOT TRUE OR d.state = 'undeliverable') AND ($2::text IS NULL OR d.endpoint_id = $2)
      ORDER BY d.created_at DESC, d.event_id, d.endpoint_id
      LIMIT $3`,
    [filter.undeliverable ?? false, filter.endpointId ?? null, filter.limit ?? 100],
  );
  return rows.map((row) => ({
    eventId: row.event_id,
    endpointId: row.endpoint_id,
    event: row.type,
    state: row.state,
    attempts: row.attempts,
    lastAttemptAt: row.last_attempt_at,
  }));
}
