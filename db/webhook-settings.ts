// The dashboard's changes to one of the issuer's webhook endpoints (Settings → Webhooks): its
// events, disabling (a pause: `paused_at`; removal is `disabled_at`, db/webhook-endpoints.ts) and enabling,
// and the synthetic test event. Every statement is scoped by the issuer and skips removed
// endpoints; false or undefined means "not found" for the caller's 404.
import { newId } from './issuers.js';
import type { Pool, PoolClient } from './pool.js';
import { sampleStatusRecord, TEST_EVENT_DISPATCH_ID } from '../domain/sample-event.js';
import type { WebhookEventType } from '../domain/state-machine.js';
import { buildWebhookBody } from '../domain/webhook-payload.js';

type Db = Pool | PoolClient;

/** Replaces the subscribed events. Pending deliveries of a type dropped here are skipped at their next attempt. */
export async function setEndpointEvents(db: Db, issuerId: string, id: string, events: WebhookEventType[]): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE webhook_endpoints SET events = $3 WHERE id = $1 AND issuer_id = $2 AND disabled_at IS NULL', [
    id,
    issuerId,
    events,
  ]);
  return rowCount === 1;
}

/** Disables (pauses) or enables an endpoint; doing it twice changes nothing. */
export async function setEndpointPaused(db: Db, issuerId: string, id: string, paused: boolean): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE webhook_endpoints SET paused_at = CASE WHEN $3 THEN coalesce(paused_at, now()) END
      WHERE id = $1 AND issuer_id = $2 AND disabled_at IS NULL`,
    [id, issuerId, paused],
  );
  return rowCount === 1;
}

/**
 * Stores a test event of `type` (a sample status record, marked `test_event`) and one pending
 * delivery of it to this endpoint only, whatever its subscriptions. The caller starts the delivery.
 * Undefined when the endpoint is not the issuer's, is removed, or is disabled.
 */
export async function createTestEvent(
  db: Db,
  issuerId: string,
  endpointId: string,
  type: WebhookEventType,
  now = new Date(),
): Promise<{ eventId: string; endpointId: string } | undefined> {
  const eventId = newId('evt');
  const timestamp = now.toISOString();
  const body = Buffer.from(buildWebhookBody({ type, timestamp, data: sampleStatusRecord(type, now) }), 'utf8');
  const { rows } = await db.query<{ endpoint_id: string }>(
    `WITH endpoint AS (
       SELECT id, mode FROM webhook_endpoints
        WHERE id = $1 AND issuer_id = $2 AND disabled_at IS NULL AND paused_at IS NULL AND $4 = ANY (events)
     ), event AS (
       INSERT INTO webhook_events (id, dispatch_id, issuer_id, mode, type, timestamp, body, test_event)
       SELECT $3, $6, $2, mode, $4, $5, $7, true FROM endpoint
       RETURNING id
     )
     INSERT INTO webhook_deliveries (event_id, endpoint_id) SELECT event.id, endpoint.id FROM event, endpoint
     RETURNING endpoint_id`,
    [endpointId, issuerId, eventId, type, timestamp, TEST_EVENT_DISPATCH_ID, body],
  );
  return rows.length === 1 ? { eventId, endpointId } : undefined;
}

/** The signing secrets, for "Reveal secret" only: the current one, and the previous one while a rotation's overlap lasts. */
export async function readEndpointSecrets(
  db: Db,
  issuerId: string,
  id: string,
): Promise<{ current: string; previous?: string; previousExpiresAt?: Date } | undefined> {
  const { rows } = await db.query<{ secret: string; previous_secret: string | null; previous_secret_expires_at: Date | null }>(
    `SELECT secret,
            CASE WHEN previous_secret_expires_at > now() THEN previous_secret END AS previous_secret,
            CASE WHEN previous_secret_expires_at > now() THEN previous_secret_expires_at END AS previous_secret_expires_at
       FROM webhook_endpoints WHERE id = $1 AND issuer_id = $2 AND disabled_at IS NULL`,
    [id, issuerId],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    current: row.secret,
    previous: row.previous_secret ?? undefined,
    previousExpiresAt: row.previous_secret_expires_at ?? undefined,
  };
}
