// Tables: webhook_endpoints. An issuer's webhook endpoints as the API reads and changes them
// (api/routes/webhook-endpoints.ts): with their description, custom headers and rate_limit, scoped
// by issuer and mode (another issuer's, the other mode's or a removed endpoint is not found), a page
// at a time, oldest first; the operator CLI's `webhook disable|enable` use them too. Adding,
// removing, rotating and the test event are db/webhook-endpoints.ts's,
// shared with the CLI and the dashboard. Custom header values leave this module only for the
// route, which masks them; nothing here logs them.
import { CURSOR_AT, creationCursors, creationPage, type CreationCursor } from './creation-cursor.js';
import { idPattern } from './ids.js';
import type { Pool, PoolClient } from './pool.js';
import type { WebhookEventType } from '../domain/vocabulary.js';

type Db = Pool | PoolClient;
type Mode = 'live' | 'test';

export interface EndpointSettings {
  id: string;
  url: string;
  events: WebhookEventType[];
  mode: Mode;
  description: string | null;
  /** The values in clear: callers mask them before answering. */
  headers: Record<string, string>;
  rateLimit: number | null;
  pausedAt: Date | null;
  /** Why it is paused: `manual` or `failing` (auto-disabled, docs/webhooks.md "Auto-disable"); null while enabled. */
  pausedReason: 'manual' | 'failing' | null;
  /** The first failed attempt since the last successful one; null when the last attempt succeeded. */
  failingSince: Date | null;
  createdAt: Date;
}

interface SettingsRow {
  id: string;
  url: string;
  events: WebhookEventType[];
  mode: Mode;
  description: string | null;
  headers: Record<string, string>;
  rate_limit: number | null;
  paused_at: Date | null;
  paused_reason: 'manual' | 'failing' | null;
  failing_since: Date | null;
  created_at: Date;
  cursor_at: string;
}

const COLUMNS = `id, url, events, mode, description, headers, rate_limit, paused_at, paused_reason, failing_since, created_at,
  ${CURSOR_AT} AS cursor_at`;

function toSettings(row: SettingsRow): EndpointSettings {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    mode: row.mode,
    description: row.description,
    headers: row.headers,
    rateLimit: row.rate_limit,
    pausedAt: row.paused_at,
    pausedReason: row.paused_at ? (row.paused_reason ?? 'manual') : null,
    failingSince: row.failing_since,
    createdAt: row.created_at,
  };
}

export async function findEndpointSettings(db: Db, issuerId: string, mode: Mode, id: string): Promise<EndpointSettings | undefined> {
  const { rows } = await db.query<SettingsRow>(
    `SELECT ${COLUMNS} FROM webhook_endpoints WHERE id = $1 AND issuer_id = $2 AND mode = $3 AND disabled_at IS NULL`,
    [id, issuerId, mode],
  );
  return rows[0] ? toSettings(rows[0]) : undefined;
}

export async function pageEndpointSettings(
  db: Db,
  issuerId: string,
  mode: Mode,
  page: { limit: number; after?: CreationCursor },
): Promise<{ items: EndpointSettings[]; next?: CreationCursor }> {
  const { rows } = await db.query<SettingsRow>(
    `SELECT ${COLUMNS} FROM webhook_endpoints
      WHERE issuer_id = $1 AND mode = $2 AND disabled_at IS NULL
        AND ($3::timestamptz IS NULL OR (created_at, id) > ($3, $4))
      ORDER BY created_at, id
      LIMIT $5`,
    [issuerId, mode, page.after?.createdAt ?? null, page.after?.id ?? null, page.limit + 1],
  );
  return creationPage(rows, page.limit, toSettings);
}

/** What a PATCH changes; a field left undefined is kept (null clears description and rate_limit). */
export interface EndpointChanges {
  url?: string;
  events?: WebhookEventType[];
  description?: string | null;
  /** true: paused (the dashboard's "disable"); false: enabled. */
  paused?: boolean;
  headers?: Record<string, string>;
  rateLimit?: number | null;
}

/** Applies the changes in one statement; undefined when the endpoint is not the issuer's (in this mode) or is removed. */
export async function updateEndpointSettings(
  db: Db,
  issuerId: string,
  mode: Mode,
  id: string,
  changes: EndpointChanges,
): Promise<EndpointSettings | undefined> {
  const { rows } = await db.query<SettingsRow>(
    `UPDATE webhook_endpoints
        SET url = coalesce($4, url),
            events = coalesce($5::text[], events),
            description = CASE WHEN $6 THEN $7 ELSE description END,
            paused_at = CASE WHEN $8::boolean IS NULL THEN paused_at WHEN $8 THEN coalesce(paused_at, now()) END,
            paused_reason = CASE WHEN $8::boolean IS NULL THEN paused_reason WHEN $8 THEN coalesce(paused_reason, 'manual') END,
            failing_since = CASE WHEN $8::boolean IS NULL OR $8 THEN failing_since END,
            headers = coalesce($9::jsonb, headers),
            rate_limit = CASE WHEN $10 THEN $11::integer ELSE rate_limit END
      WHERE id = $1 AND issuer_id = $2 AND mode = $3 AND disabled_at IS NULL
      RETURNING ${COLUMNS}`,
    [
      id,
      issuerId,
      mode,
      changes.url ?? null,
      changes.events ?? null,
      changes.description !== undefined,
      changes.description ?? null,
      changes.paused ?? null,
      changes.headers === undefined ? null : JSON.stringify(changes.headers),
      changes.rateLimit !== undefined,
      changes.rateLimit ?? null,
    ],
  );
  return rows[0] ? toSettings(rows[0]) : undefined;
}

/**
 * The issuer and mode of an endpoint known only by its id (the operator CLI's `webhook disable|enable`),
 * which then goes through the functions above like the API; undefined when unknown or removed.
 */
export async function findEndpointScope(db: Db, id: string): Promise<{ issuerId: string; mode: Mode } | undefined> {
  const { rows } = await db.query<{ issuer_id: string; mode: Mode }>(
    'SELECT issuer_id, mode FROM webhook_endpoints WHERE id = $1 AND disabled_at IS NULL',
    [id],
  );
  return rows[0] ? { issuerId: rows[0].issuer_id, mode: rows[0].mode } : undefined;
}

/**
 * Where what a disabled endpoint missed starts: its first failure when auto-disabled, else when it
 * was paused; undefined while it is enabled. Read before enabling it (enabling clears both).
 */
export function missedFrom(endpoint: Pick<EndpointSettings, 'pausedAt' | 'pausedReason' | 'failingSince'>): Date | undefined {
  if (!endpoint.pausedAt) return undefined;
  return (endpoint.pausedReason === 'failing' && endpoint.failingSince) || endpoint.pausedAt;
}

/**
 * What an endpoint missed while disabled (docs/webhooks.md "Auto-disable"), from `from` (its first
 * failure when auto-disabled, else when it was disabled) to `until`: its deliveries not delivered
 * (skipped while disabled, undeliverable, pending) of events created since `from` or attempted since
 * then. `since` is the oldest such event's creation (or `from`): a replay of [since, until)
 * (POST /v1/webhook_endpoints/{id}/replay) sends them all.
 */
export async function missedDeliveries(db: Db, endpointId: string, from: Date, until: Date): Promise<{ since: Date; count: number }> {
  const { rows } = await db.query<{ since: Date; n: number }>(
    `WITH missed AS (
       SELECT ev.created_at FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
        WHERE d.endpoint_id = $1 AND d.state <> 'delivered' AND ev.created_at < $3
          AND (ev.created_at >= $2 OR d.last_attempt_at >= $2)
     )
     SELECT least($2::timestamptz, min(created_at)) AS since, count(*)::int AS n FROM missed`,
    [endpointId, from, until],
  );
  return { since: rows[0].since, count: rows[0].n };
}

const cursors = creationCursors(idPattern('whe'));
export const encodeEndpointCursor = cursors.encode;
export const decodeEndpointCursor = cursors.decode;
