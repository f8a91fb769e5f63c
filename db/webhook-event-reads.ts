// Tables: webhook_events, webhook_deliveries, delivery_attempts (reads only; db/webhooks.ts writes
// them). An issuer's webhook events as GET /v1/events lists them (one mode, newest first, keyset on
// creation time and id, filtered by type, dispatch and start time) and as GET /v1/events/{id} shows
// one, with its delivery to each endpoint and every attempt of it. Always scoped by issuer and mode:
// another issuer's or the other mode's event is not found, nor one of a dispatch whose erasure was
// requested (its record is in the event's body).
import { CURSOR_AT, creationCursors, creationPage, type CreationCursor } from './creation-cursor.js';
import { notErased } from './dispatches.js';
import { idPattern } from './ids.js';
import type { Pool, PoolClient } from './pool.js';
import type { DeliveryState } from './webhooks.js';
import type { WebhookEventType } from '../domain/vocabulary.js';

type Db = Pool | PoolClient;
type Mode = 'live' | 'test';

export interface WebhookEventItem {
  id: string;
  type: WebhookEventType;
  dispatchId: string;
  createdAt: Date;
  /** The envelope's `data`: the status record the webhook carried. */
  data: Record<string, unknown>;
}

interface EventRow {
  id: string;
  type: WebhookEventType;
  dispatch_id: string;
  created_at: Date;
  body: Buffer;
  cursor_at: string;
}

const COLUMNS = `id, type, dispatch_id, created_at, body,
  ${CURSOR_AT} AS cursor_at`;

/** The events of a dispatch whose erasure was requested are no longer shown (db/dispatches.ts notErased). */
const NOT_ERASED = notErased('webhook_events.dispatch_id');

function toItem(row: EventRow): WebhookEventItem {
  // An event whose payload expired (docs/privacy.md) has an empty body: its data is gone, its id, type and time stay.
  const envelope = (row.body.length > 0 ? JSON.parse(row.body.toString('utf8')) : {}) as { data?: Record<string, unknown> };
  return { id: row.id, type: row.type, dispatchId: row.dispatch_id, createdAt: row.created_at, data: envelope.data ?? {} };
}

export async function pageWebhookEvents(
  db: Db,
  query: {
    issuerId: string;
    mode: Mode;
    type?: WebhookEventType;
    dispatchId?: string;
    since?: Date;
    limit: number;
    after?: CreationCursor;
  },
): Promise<{ items: WebhookEventItem[]; next?: CreationCursor }> {
  const { rows } = await db.query<EventRow>(
    `SELECT ${COLUMNS} FROM webhook_events
      WHERE issuer_id = $1 AND mode = $2 AND ${NOT_ERASED}
        AND ($3::text IS NULL OR type = $3)
        AND ($4::uuid IS NULL OR dispatch_id = $4)
        AND ($5::timestamptz IS NULL OR created_at >= $5)
        AND ($6::timestamptz IS NULL OR (created_at, id) < ($6, $7))
      ORDER BY created_at DESC, id DESC
      LIMIT $8`,
    [
      query.issuerId,
      query.mode,
      query.type ?? null,
      query.dispatchId ?? null,
      query.since ?? null,
      query.after?.createdAt ?? null,
      query.after?.id ?? null,
      query.limit + 1,
    ],
  );
  return creationPage(rows, query.limit, toItem);
}

export interface EventDelivery {
  endpointId: string;
  state: DeliveryState;
  /** Oldest first. */
  attempts: Array<{
    number: number;
    attemptedAt: Date;
    statusCode: number | null;
    outcome: 'delivered' | 'failed' | 'undeliverable';
    durationMs: number;
  }>;
}

/** One event of the issuer in `mode`, with its deliveries (by endpoint id); undefined for any other. */
export async function findWebhookEvent(
  db: Db,
  issuerId: string,
  mode: Mode,
  id: string,
): Promise<(WebhookEventItem & { deliveries: EventDelivery[] }) | undefined> {
  const { rows } = await db.query<EventRow>(
    `SELECT ${COLUMNS} FROM webhook_events WHERE id = $1 AND issuer_id = $2 AND mode = $3 AND ${NOT_ERASED}`,
    [id, issuerId, mode],
  );
  if (!rows[0]) return undefined;
  const deliveries = await db.query<{ endpoint_id: string; state: DeliveryState }>(
    'SELECT endpoint_id, state FROM webhook_deliveries WHERE event_id = $1 ORDER BY endpoint_id',
    [id],
  );
  const attempts = await db.query<{
    endpoint_id: string;
    attempt: number;
    started_at: Date;
    status_code: number | null;
    state_after: 'delivered' | 'pending' | 'undeliverable';
    duration_ms: number;
  }>(
    'SELECT endpoint_id, attempt, started_at, status_code, state_after, duration_ms FROM delivery_attempts WHERE event_id = $1 ORDER BY id',
    [id],
  );
  return {
    ...toItem(rows[0]),
    deliveries: deliveries.rows.map((delivery) => ({
      endpointId: delivery.endpoint_id,
      state: delivery.state,
      attempts: attempts.rows
        .filter((a) => a.endpoint_id === delivery.endpoint_id)
        .map((a) => ({
          number: a.attempt,
          attemptedAt: a.started_at,
          statusCode: a.status_code,
          outcome: a.state_after === 'pending' ? 'failed' : a.state_after,
          durationMs: a.duration_ms,
        })),
    })),
  };
}

const cursors = creationCursors(idPattern('evt'));
export const encodeEventCursor = cursors.encode;
export const decodeEventCursor = cursors.decode;
