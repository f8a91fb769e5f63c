// Tables: webhook_events, webhook_deliveries, delivery_attempts (the reads for people; db/webhooks.ts
// writes them). The delivery log of one webhook endpoint, as the dashboard shows it: every attempt,
// newest first (keyset on the attempt id), filtered by event type and outcome, and one event's
// detail — the exact body that was sent and each attempt with the headers it carried (its
// signatures); callers pass an endpoint id they have already found in the signed-in issuer's
// endpoints. Then a dispatch's webhook events, the endpoints' health, and the CLI's delivery list.
import type { Pool, PoolClient } from './pool.js';
import { listWebhookEndpoints, type WebhookEndpointSummary } from './webhook-endpoints.js';
import type { DeliveryState } from './webhooks.js';
import type { WebhookEventType } from '../domain/vocabulary.js';

type Db = Pool | PoolClient;

/**
 * delivered: the attempt succeeded · failed: it failed (a retry followed or not) · undeliverable:
 * it failed and no retry was left · pending: attempts of deliveries still waiting for a retry now.
 */
export const OUTCOMES = ['delivered', 'failed', 'undeliverable', 'pending'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export interface AttemptRow {
  id: number;
  eventId: string;
  eventType: WebhookEventType;
  testEvent: boolean;
  attempt: number;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  /** The first bytes of the response body, as text. */
  responseHead: string;
  /** The attempt's own result. */
  result: 'delivered' | 'failed' | 'undeliverable';
  requestHeaders: Record<string, string> | null;
}

const ATTEMPT_COLUMNS = `a.id, a.event_id, ev.type, ev.test_event, a.attempt, a.started_at, a.duration_ms, a.status_code, a.error,
  a.response_head, a.state_after, a.request_headers`;

interface AttemptDbRow {
  id: string;
  event_id: string;
  type: WebhookEventType;
  test_event: boolean;
  attempt: number;
  started_at: Date;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  response_head: Buffer | null;
  state_after: 'delivered' | 'pending' | 'undeliverable';
  request_headers: Record<string, string> | null;
}

function toAttempt(row: AttemptDbRow): AttemptRow {
  return {
    id: Number(row.id),
    eventId: row.event_id,
    eventType: row.type,
    testEvent: row.test_event,
    attempt: row.attempt,
    startedAt: row.started_at,
    durationMs: row.duration_ms,
    statusCode: row.status_code,
    error: row.error,
    responseHead: row.response_head ? row.response_head.toString('utf8') : '',
    result: row.state_after === 'pending' ? 'failed' : row.state_after,
    requestHeaders: row.request_headers,
  };
}

export interface AttemptFilter {
  eventType?: WebhookEventType;
  outcome?: Outcome;
  /** Only attempts older than this attempt id (the next page). */
  before?: number;
  limit: number;
}

/** One page of the endpoint's attempts, and the cursor of the next page (undefined on the last). */
export async function listAttempts(db: Db, endpointId: string, filter: AttemptFilter): Promise<{ attempts: AttemptRow[]; next?: number }> {
  const { rows } = await db.query<AttemptDbRow>(
    `SELECT ${ATTEMPT_COLUMNS}
       FROM delivery_attempts a
       JOIN webhook_events ev ON ev.id = a.event_id
       JOIN webhook_deliveries d ON d.event_id = a.event_id AND d.endpoint_id = a.endpoint_id
      WHERE a.endpoint_id = $1
        AND ($2::text IS NULL OR ev.type = $2)
        AND ($3::bigint IS NULL OR a.id < $3)
        AND CASE $4::text
              WHEN 'delivered' THEN a.state_after = 'delivered'
              WHEN 'failed' THEN a.state_after <> 'delivered'
              WHEN 'undeliverable' THEN a.state_after = 'undeliverable'
              WHEN 'pending' THEN d.state = 'pending'
              ELSE true
            END
      ORDER BY a.id DESC
      LIMIT $5`,
    [endpointId, filter.eventType ?? null, filter.before ?? null, filter.outcome ?? null, filter.limit + 1],
  );
  const attempts = rows.slice(0, filter.limit).map(toAttempt);
  return { attempts, next: rows.length > filter.limit ? attempts[attempts.length - 1].id : undefined };
}

export interface DeliveryDetail {
  eventId: string;
  eventType: WebhookEventType;
  dispatchId: string;
  testEvent: boolean;
  /** The envelope's `timestamp`. */
  timestamp: Date;
  /** The exact body bytes sent on every attempt, as text (UTF-8 JSON). */
  body: string;
  state: DeliveryState;
  skippedReason: string | null;
  /** Oldest first. */
  attempts: AttemptRow[];
}

/** One event's delivery to the endpoint, with all its attempts; undefined when it never went there. */
export async function findDelivery(db: Db, endpointId: string, eventId: string): Promise<DeliveryDetail | undefined> {
  const { rows } = await db.query(
    `SELECT ev.id, ev.type, ev.dispatch_id, ev.test_event, ev.timestamp, ev.body, d.state, d.skipped_reason
       FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
      WHERE d.endpoint_id = $1 AND d.event_id = $2`,
    [endpointId, eventId],
  );
  const row = rows[0];
  if (!row) return undefined;
  const attempts = await db.query<AttemptDbRow>(
    `SELECT ${ATTEMPT_COLUMNS} FROM delivery_attempts a JOIN webhook_events ev ON ev.id = a.event_id
      WHERE a.endpoint_id = $1 AND a.event_id = $2 ORDER BY a.id`,
    [endpointId, eventId],
  );
  return {
    eventId: row.id,
    eventType: row.type,
    dispatchId: row.dispatch_id,
    testEvent: row.test_event,
    timestamp: row.timestamp,
    body: (row.body as Buffer).toString('utf8'),
    state: row.state,
    skippedReason: row.skipped_reason,
    attempts: attempts.rows.map(toAttempt),
  };
}

/** Waits (polling) until the delivery has at least `count` attempts recorded, or `timeoutMs` passes. */
export async function waitForAttempts(db: Db, endpointId: string, eventId: string, count: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM delivery_attempts WHERE endpoint_id = $1 AND event_id = $2',
      [endpointId, eventId],
    );
    if (rows[0].n >= count) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// ---- The webhook events one dispatch caused, each with its delivery to every endpoint it was meant
// for (state and attempts so far), for the dashboard's dispatch page.

export interface DispatchWebhookEvent {
  id: string;
  type: WebhookEventType;
  createdAt: Date;
  /** One per endpoint the event was for; empty when no endpoint had subscribed to its type. */
  deliveries: Array<{
    endpointId: string;
    endpointUrl: string;
    state: DeliveryState;
    attempts: number;
    lastAttemptAt: Date | null;
    skippedReason: string | null;
  }>;
}

/** Oldest first; scoped by issuer as well as dispatch, so a stray id can never show another's events. */
export async function listDispatchWebhookEvents(pool: Pool, issuerId: string, dispatchId: string): Promise<DispatchWebhookEvent[]> {
  const { rows } = await pool.query(
    `SELECT ev.id, ev.type, ev.created_at,
            coalesce(json_agg(json_build_object(
              'endpointId', d.endpoint_id, 'endpointUrl', e.url, 'state', d.state, 'attempts', d.attempts,
              'lastAttemptAt', d.last_attempt_at, 'skippedReason', d.skipped_reason) ORDER BY d.endpoint_id)
              FILTER (WHERE d.endpoint_id IS NOT NULL), '[]') AS deliveries
       FROM webhook_events ev
       LEFT JOIN webhook_deliveries d ON d.event_id = ev.id
       LEFT JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE ev.dispatch_id = $1 AND ev.issuer_id = $2
      GROUP BY ev.id
      ORDER BY ev.created_at, ev.id`,
    [dispatchId, issuerId],
  );
  return rows.map((row) => ({
    id: row.id,
    type: row.type,
    createdAt: row.created_at,
    deliveries: (row.deliveries as Array<Record<string, unknown>>).map((d) => ({
      endpointId: d.endpointId as string,
      endpointUrl: d.endpointUrl as string,
      state: d.state as DeliveryState,
      attempts: d.attempts as number,
      lastAttemptAt: d.lastAttemptAt ? new Date(d.lastAttemptAt as string) : null,
      skippedReason: (d.skippedReason as string | null) ?? null,
    })),
  }));
}

// ---- An issuer's webhook endpoints as the dashboard shows them (Settings → Webhooks): each with its
// health — last successful attempt, failure rate of the attempts of the last 24 hours, and how
// many deliveries are undeliverable now (a replay takes them out of that count). Always scoped by
// the issuer: another issuer's endpoint is simply not found.

/** The window of the failure rate. */
export const HEALTH_WINDOW_HOURS = 24;

export interface EndpointHealth {
  lastSuccessAt: Date | null;
  /** Attempts in the window, and how many of them failed. */
  recentAttempts: number;
  recentFailures: number;
  undeliverable: number;
}

export type EndpointWithHealth = WebhookEndpointSummary & { health: EndpointHealth };

export async function listEndpointsWithHealth(db: Db, issuerId: string): Promise<EndpointWithHealth[]> {
  const endpoints = await listWebhookEndpoints(db, { issuerId });
  if (endpoints.length === 0) return [];
  const { rows } = await db.query<{ id: string; last_success_at: Date | null; attempts: number; failures: number; undeliverable: number }>(
    `SELECT e.id,
            (SELECT max(a.started_at) FROM delivery_attempts a WHERE a.endpoint_id = e.id AND a.error IS NULL) AS last_success_at,
            r.attempts, r.failures,
            (SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.state = 'undeliverable')::int AS undeliverable
       FROM unnest($1::text[]) AS e (id)
       CROSS JOIN LATERAL (
         SELECT count(*)::int AS attempts, count(*) FILTER (WHERE a.error IS NOT NULL)::int AS failures
           FROM delivery_attempts a
          WHERE a.endpoint_id = e.id AND a.started_at > now() - make_interval(hours => $2)
       ) r`,
    [endpoints.map((endpoint) => endpoint.id), HEALTH_WINDOW_HOURS],
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  return endpoints.map((endpoint) => {
    const row = byId.get(endpoint.id)!;
    return {
      ...endpoint,
      health: {
        lastSuccessAt: row.last_success_at,
        recentAttempts: row.attempts,
        recentFailures: row.failures,
        undeliverable: row.undeliverable,
      },
    };
  });
}

// ---- The admin CLI's delivery list (`deliveries list`).

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

// ---- The dashboard's charts (home and endpoint page): the issuer's attempts of the last 7 days,
// grouped in SQL — per hour by the attempt's own result, and per day as duration percentiles.
// Scoped by the issuer through the endpoint (and to one endpoint when given).

export const CHART_WINDOW_DAYS = 7;

/** Attempts per UTC hour: delivered, failed (a retry followed), undeliverable (none was left). */
export async function attemptsPerHour(
  db: Db,
  issuerId: string,
  endpointId?: string,
): Promise<Array<{ hour: Date; delivered: number; failed: number; undeliverable: number }>> {
  const { rows } = await db.query<{ hour: Date; delivered: number; failed: number; undeliverable: number }>(
    `SELECT date_trunc('hour', a.started_at, 'UTC') AS hour,
            count(*) FILTER (WHERE a.state_after = 'delivered')::int AS delivered,
            count(*) FILTER (WHERE a.state_after = 'pending')::int AS failed,
            count(*) FILTER (WHERE a.state_after = 'undeliverable')::int AS undeliverable
       FROM delivery_attempts a JOIN webhook_endpoints e ON e.id = a.endpoint_id
      WHERE e.issuer_id = $1 AND ($2::text IS NULL OR a.endpoint_id = $2)
        AND a.started_at > now() - make_interval(days => $3)
      GROUP BY 1 ORDER BY 1`,
    [issuerId, endpointId ?? null, CHART_WINDOW_DAYS],
  );
  return rows;
}

/** p50/p95/p99 of the attempts' duration_ms per UTC day. */
export async function attemptDurationsPerDay(
  db: Db,
  issuerId: string,
  endpointId?: string,
): Promise<Array<{ day: Date; attempts: number; p50: number; p95: number; p99: number }>> {
  const { rows } = await db.query<{ day: Date; attempts: number; p50: number; p95: number; p99: number }>(
    `SELECT date_trunc('day', a.started_at, 'UTC') AS day, count(*)::int AS attempts,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY a.duration_ms)::float8 AS p50,
            percentile_cont(0.95) WITHIN GROUP (ORDER BY a.duration_ms)::float8 AS p95,
            percentile_cont(0.99) WITHIN GROUP (ORDER BY a.duration_ms)::float8 AS p99
       FROM delivery_attempts a JOIN webhook_endpoints e ON e.id = a.endpoint_id
      WHERE e.issuer_id = $1 AND ($2::text IS NULL OR a.endpoint_id = $2)
        AND a.started_at > now() - make_interval(days => $3)
      GROUP BY 1 ORDER BY 1`,
    [issuerId, endpointId ?? null, CHART_WINDOW_DAYS],
  );
  return rows;
}
