// Tables: webhook_endpoints. Adding one (with its secret, within the per-issuer limit), listing,
// finding, removing and rotating its secret (docs/webhooks.md), and the dashboard's settings of
// one; its synthetic test event is the one webhook event written here (one statement with the
// endpoint check). Callers: the admin CLI, the dashboard and the endpoint-health read model.
// Events, deliveries and attempts are written in db/webhooks.ts and read in db/delivery-log.ts.
import type { WebhookEventType } from '../domain/vocabulary.js';
import { buildEndpointDisabledBody, buildWebhookBody } from '../domain/webhook-payload.js';
import { newId } from './ids.js';
import type { Pool, PoolClient } from './pool.js';
import { sampleStatusRecord, TEST_EVENT_DISPATCH_ID } from '../domain/sample-event.js';
import { generateSecret } from '../domain/signing.js';

type Db = Pool | PoolClient;

/** Endpoints an issuer may have at once (removed ones do not count) when callers pass no other: WEBHOOK_MAX_ENDPOINTS_PER_ISSUER's default. */
export const MAX_ENDPOINTS_PER_ISSUER = 20;

export interface WebhookEndpointSummary {
  id: string;
  issuerId: string;
  url: string;
  events: WebhookEventType[];
  /** Test-mode endpoints receive only test-mode dispatches' events, live ones only live events. */
  mode: 'live' | 'test';
  createdAt: Date;
  /** While a rotation's overlap lasts: when the previous secret stops signing. */
  previousSecretExpiresAt: Date | null;
  signatureSwitchAt: Date | null;
  /** Set while the endpoint is disabled from the dashboard (a pause: it gets no deliveries; not removed). */
  pausedAt: Date | null;
  /** Why: `manual`, or `failing` when auto-disabled (docs/webhooks.md "Auto-disable"); null while enabled. */
  pausedReason: 'manual' | 'failing' | null;
  /** The first failed attempt since the last successful one. */
  failingSince: Date | null;
}

export type CreateEndpointResult =
  { ok: true; endpoint: WebhookEndpointSummary; secret: string } | { ok: false; reason: 'unknown_issuer' | 'limit_reached' };

/** Adds an endpoint (live unless told) with a fresh secret; at most `max` active endpoints per issuer, both modes together. */
export async function createWebhookEndpoint(
  pool: Pool,
  input: {
    issuerId: string;
    url: string;
    events: WebhookEventType[];
    mode?: 'live' | 'test';
    /** The API's settings (db/webhook-endpoint-settings.ts); the CLI and the dashboard leave them out. */
    settings?: { description?: string | null; headers?: Record<string, string>; rateLimit?: number | null };
  },
  max = MAX_ENDPOINTS_PER_ISSUER,
): Promise<CreateEndpointResult> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    // Locking the issuer row serialises concurrent adds, so the count below cannot be overtaken.
    const issuer = await client.query('SELECT id FROM issuers WHERE id = $1 AND erased_at IS NULL FOR UPDATE', [input.issuerId]);
    if (issuer.rowCount === 0) {
      await client.query('ROLLBACK');
      return { ok: false, reason: 'unknown_issuer' };
    }
    const { rows: count } = await client.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM webhook_endpoints WHERE issuer_id = $1 AND disabled_at IS NULL',
      [input.issuerId],
    );
    if (count[0].n >= max) {
      await client.query('ROLLBACK');
      return { ok: false, reason: 'limit_reached' };
    }
    const secret = generateSecret();
    const mode = input.mode ?? 'live';
    const { rows } = await client.query<{ id: string; created_at: Date }>(
      `INSERT INTO webhook_endpoints (id, issuer_id, url, events, secret, mode, description, headers, rate_limit)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id, created_at`,
      [newId('whe'), input.issuerId, input.url, input.events, secret, mode, input.settings?.description ?? null, input.settings?.headers ?? {}, input.settings?.rateLimit ?? null], // prettier-ignore
    );
    await client.query('COMMIT');
    const endpoint = {
      id: rows[0].id,
      issuerId: input.issuerId,
      url: input.url,
      events: input.events,
      mode,
      createdAt: rows[0].created_at,
      previousSecretExpiresAt: null,
      signatureSwitchAt: null,
      pausedAt: null,
      pausedReason: null,
      failingSince: null,
    };
    return { ok: true, endpoint, secret };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

interface EndpointRow {
  id: string;
  issuer_id: string;
  url: string;
  events: WebhookEventType[];
  mode: 'live' | 'test';
  created_at: Date;
  previous_secret_expires_at: Date | null;
  signature_switch_at: Date | null;
  paused_at: Date | null;
  paused_reason: 'manual' | 'failing' | null;
  failing_since: Date | null;
}

const ENDPOINT_COLUMNS = `id, issuer_id, url, events, mode, created_at, paused_at, paused_reason, failing_since,
  CASE WHEN previous_secret_expires_at > now() THEN previous_secret_expires_at END AS previous_secret_expires_at,
  CASE WHEN previous_secret_expires_at > now() THEN signature_switch_at END AS signature_switch_at`;

function toSummary(row: EndpointRow): WebhookEndpointSummary {
  return {
    id: row.id,
    issuerId: row.issuer_id,
    url: row.url,
    events: row.events,
    mode: row.mode,
    createdAt: row.created_at,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    signatureSwitchAt: row.signature_switch_at,
    pausedAt: row.paused_at,
    pausedReason: row.paused_at ? (row.paused_reason ?? 'manual') : null,
    failingSince: row.failing_since,
  };
}

/** Endpoints not removed (paused ones included), oldest first, never with their secrets. */
export async function listWebhookEndpoints(db: Db, filter: { issuerId?: string } = {}): Promise<WebhookEndpointSummary[]> {
  const { rows } = await db.query<EndpointRow>(
    `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints
      WHERE disabled_at IS NULL AND ($1::text IS NULL OR issuer_id = $1)
      ORDER BY created_at, id`,
    [filter.issuerId ?? null],
  );
  return rows.map(toSummary);
}

/** Whether the endpoint exists, removed or not (its deliveries stay after its removal). */
export async function endpointExists(db: Db, id: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM webhook_endpoints WHERE id = $1', [id]);
  return rowCount === 1;
}

/** Removes (disables) an endpoint; pending deliveries to it are skipped. Undefined when unknown. */
export async function removeWebhookEndpoint(
  db: Db,
  id: string,
): Promise<{ id: string; removedAt: Date; alreadyRemoved: boolean } | undefined> {
  const { rows } = await db.query<{ id: string; disabled_at: Date; already: boolean }>(
    `UPDATE webhook_endpoints e SET disabled_at = coalesce(e.disabled_at, now())
       FROM (SELECT id, disabled_at IS NOT NULL AS already FROM webhook_endpoints WHERE id = $1 FOR UPDATE) before
      WHERE e.id = before.id
      RETURNING e.id, e.disabled_at, before.already`,
    [id],
  );
  if (rows.length === 0) return undefined;
  return { id: rows[0].id, removedAt: rows[0].disabled_at, alreadyRemoved: rows[0].already };
}

export interface RotatedSecret {
  id: string;
  secret: string;
  previousSecretExpiresAt: Date;
  signatureSwitchAt: Date;
}

/**
 * Replaces the secret. The old one keeps signing `webhook-signature` for `overlapMs`, and
 * `X-Service-Signature` until `switchAt` (default: the end of the overlap; must not be later).
 * A rotation during another rotation's overlap drops the older previous secret at once.
 * Undefined when the endpoint is unknown or removed.
 */
export async function rotateWebhookSecret(
  db: Db,
  id: string,
  options: { overlapMs: number; switchAt?: Date },
): Promise<RotatedSecret | undefined> {
  const secret = generateSecret();
  const { rows } = await db.query<{ id: string; previous_secret_expires_at: Date; signature_switch_at: Date }>(
    `UPDATE webhook_endpoints
        SET previous_secret = secret,
            secret = $2,
            previous_secret_expires_at = now() + make_interval(secs => $3::double precision / 1000),
            signature_switch_at = coalesce($4::timestamptz, now() + make_interval(secs => $3::double precision / 1000))
      WHERE id = $1 AND disabled_at IS NULL
      RETURNING id, previous_secret_expires_at, signature_switch_at`,
    [id, secret, options.overlapMs, options.switchAt ?? null],
  );
  if (rows.length === 0) return undefined;
  return {
    id: rows[0].id,
    secret,
    previousSecretExpiresAt: rows[0].previous_secret_expires_at,
    signatureSwitchAt: rows[0].signature_switch_at,
  };
}

/** One endpoint of the issuer (paused ones too; removed ones never), without its secret. */
export async function findEndpoint(db: Db, issuerId: string, id: string): Promise<WebhookEndpointSummary | undefined> {
  // At most WEBHOOK_MAX_ENDPOINTS_PER_ISSUER per issuer (20 by default, 1000 at most): reading them all is the scoped lookup.
  return (await listWebhookEndpoints(db, { issuerId })).find((endpoint) => endpoint.id === id);
}

// ---- The dashboard's changes to one endpoint (Settings → Webhooks): its events, disabling (a pause:
// `paused_at`; removal is `disabled_at`, above) and enabling, and the synthetic test event. Every
// statement is scoped by the issuer and skips removed endpoints; false or undefined means "not found"
// for the caller's 404.

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
    `UPDATE webhook_endpoints SET paused_at = CASE WHEN $3 THEN coalesce(paused_at, now()) END,
            paused_reason = CASE WHEN $3 THEN coalesce(paused_reason, 'manual') END,
            failing_since = CASE WHEN $3 THEN failing_since END
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
  // webhook_endpoint.disabled carries an endpoint, not a status record: this endpoint's id and a sample URL.
  const text =
    type === 'webhook_endpoint.disabled'
      ? buildEndpointDisabledBody(timestamp, { id: endpointId, url: 'https://example.com/TEST', disabled_reason: 'failing', disabled_at: timestamp }) // prettier-ignore
      : buildWebhookBody({ type, timestamp, data: sampleStatusRecord(type, now) });
  const body = Buffer.from(text, 'utf8');
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

/**
 * Takes back a test event whose redelivery workflow could not be started, with its delivery, so
 * the caller's error means nothing was sent and nothing will be: left pending, the reconciler
 * would deliver it minutes later and the caller's retry a second one. False when a driver has
 * claimed the delivery already (the start reached Temporal although its answer did not): it is
 * being sent, and the event stays.
 */
export async function removeUnstartedTestEvent(db: Db, eventId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `WITH delivery AS (
       DELETE FROM webhook_deliveries d
        WHERE d.event_id = $1 AND d.driver IS NULL AND EXISTS (SELECT 1 FROM webhook_events ev WHERE ev.id = $1 AND ev.test_event)
        RETURNING d.event_id
     )
     DELETE FROM webhook_events WHERE id IN (SELECT event_id FROM delivery)`,
    [eventId],
  );
  return rowCount === 1;
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
