// Test fixtures: webhook events and their deliveries stored directly, as a dispatch's change stores
// them (db/dispatch-changes.ts) but without a dispatch workflow, for tests of what reads or drives
// them (the delivery activity, replays, the delivery log, the CLI).
import type { Pool } from '../../db/pool.js';
import { newId } from '../../db/ids.js';
import type { StatusRecord } from '../../domain/dispatch-schemas.js';
import type { WebhookEventType } from '../../domain/vocabulary.js';
import { buildWebhookBody } from '../../domain/webhook-payload.js';

type Db = Pool;

export interface NewWebhookEvent {
  type: WebhookEventType;
  /** ISO 8601, fixed now and identical on every attempt. */
  timestamp: string;
  data: StatusRecord;
  /** A caller-chosen key: a repeat returns the rows it made instead of making them twice. */
  idempotencyKey?: string;
}

/**
 * Stores each event's body once and one pending delivery per endpoint of the issuer, of the
 * dispatch's mode, that subscribed to its type, in one statement (all or nothing). Returns the (event, endpoint) pairs to
 * deliver, in input order. A paused (disabled) endpoint gets its delivery already `skipped`. Events
 * whose idempotency key already exists are not created again: their existing deliveries are returned.
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
     ORDER BY ord, event_id, endpoint_id`,
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
