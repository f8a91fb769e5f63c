// Tables: webhook_events, webhook_deliveries, delivery_attempts (the reads for people; db/webhooks.ts
// writes them). Summaries over many deliveries: the webhook events one dispatch caused, each
// endpoint's health and the dashboard's charts of attempts, and the operator CLI's delivery list.
// One endpoint's delivery log, attempt by attempt, is db/delivery-log.ts.
import type { Pool, PoolClient } from './pool.js';
import { listWebhookEndpoints, type WebhookEndpointSummary } from './webhook-endpoints.js';
import type { DeliveryState } from './webhooks.js';
import type { WebhookEventType } from '../domain/vocabulary.js';

type Db = Pool | PoolClient;

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

/** Deliveries, newest first (ties by event and endpoint id, descending: the order of its indexes, test/db/list-plans.test.ts). */
export async function listDeliveries(
  db: Db,
  filter: { undeliverable?: boolean; endpointId?: string; limit?: number } = {},
): Promise<DeliverySummary[]> {
  const { rows } = await db.query(
    `SELECT d.event_id, d.endpoint_id, ev.type, d.state, d.attempts, d.last_attempt_at
       FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
      WHERE ($1::boolean IS NOT TRUE OR d.state = 'undeliverable') AND ($2::text IS NULL OR d.endpoint_id = $2)
      ORDER BY d.created_at DESC, d.event_id DESC, d.endpoint_id DESC
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
