// Tables: webhook_events, webhook_deliveries, delivery_attempts (the reads for people; db/webhooks.ts
// writes them). The delivery log of one webhook endpoint, as the dashboard shows it: every attempt,
// newest first (keyset on the attempt id), filtered by event type and outcome, and one event's
// detail — the exact body that was sent and each attempt with the headers it carried (its
// signatures); callers pass an endpoint id they have already found in the signed-in issuer's
// endpoints. The summaries over many deliveries (a dispatch's, the endpoints' health, the charts, the
// CLI's list) are in db/delivery-summaries.ts.
import { notErased } from './dispatches.js';
import type { Pool, PoolClient } from './pool.js';
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

/**
 * One page of the endpoint's attempts, and the cursor of the next page (undefined on the last). The
 * delivery is looked up only for the pending filter: joined on its two columns, the planner counts
 * one attempt in twenty as having one (it multiplies the columns' selectivities) and walks the
 * whole log instead of the endpoint's index.
 */
export async function listAttempts(db: Db, endpointId: string, filter: AttemptFilter): Promise<{ attempts: AttemptRow[]; next?: number }> {
  const { rows } = await db.query<AttemptDbRow>(
    `SELECT ${ATTEMPT_COLUMNS}
       FROM delivery_attempts a
       JOIN webhook_events ev ON ev.id = a.event_id
      WHERE a.endpoint_id = $1
        AND ($2::text IS NULL OR ev.type = $2)
        AND ($3::bigint IS NULL OR a.id < $3)
        AND CASE $4::text
              WHEN 'delivered' THEN a.state_after = 'delivered'
              WHEN 'failed' THEN a.state_after <> 'delivered'
              WHEN 'undeliverable' THEN a.state_after = 'undeliverable'
              WHEN 'pending' THEN EXISTS (SELECT FROM webhook_deliveries d
                                           WHERE d.event_id = a.event_id AND d.endpoint_id = a.endpoint_id AND d.state = 'pending')
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
  /** The exact body bytes sent on every attempt, as text (UTF-8 JSON); empty once the payload expired. */
  body: string;
  /** When the retention window cleared the payload (docs/privacy.md); null while it is kept. */
  payloadExpiredAt: Date | null;
  state: DeliveryState;
  skippedReason: string | null;
  /** Oldest first. */
  attempts: AttemptRow[];
}

/**
 * One event's delivery to the endpoint, with all its attempts; undefined when it never went there, or
 * when its dispatch's erasure was requested (the body holds the dispatch's record).
 */
export async function findDelivery(db: Db, endpointId: string, eventId: string): Promise<DeliveryDetail | undefined> {
  const { rows } = await db.query(
    `SELECT ev.id, ev.type, ev.dispatch_id, ev.test_event, ev.timestamp, ev.body, ev.payload_expired_at, d.state, d.skipped_reason
       FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
      WHERE d.endpoint_id = $1 AND d.event_id = $2 AND ${notErased('ev.dispatch_id')}`,
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
    payloadExpiredAt: row.payload_expired_at,
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
