// Tables: webhook_endpoints. An issuer's webhook endpoints as the API reads and changes them
// (api/routes/webhook-endpoints.ts): with their description, custom headers and rate_limit, scoped
// by issuer and mode (another issuer's, the other mode's or a removed endpoint is not found), a page
// at a time, oldest first. Adding, removing, rotating and the test event are db/webhook-endpoints.ts's,
// shared with the CLI and the dashboard. Custom header values leave this module only for the
// route, which masks them; nothing here logs them.
import type { Pool, PoolClient } from './pool.js';
import type { WebhookEventType } from '../domain/state-machine.js';

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
  created_at: Date;
  cursor_at: string;
}

const COLUMNS = `id, url, events, mode, description, headers, rate_limit, paused_at, created_at,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at`;

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

export interface EndpointCursor {
  createdAt: string;
  id: string;
}

export async function pageEndpointSettings(
  db: Db,
  issuerId: string,
  mode: Mode,
  page: { limit: number; after?: EndpointCursor },
): Promise<{ items: EndpointSettings[]; next?: EndpointCursor }> {
  const { rows } = await db.query<SettingsRow>(
    `SELECT ${COLUMNS} FROM webhook_endpoints
      WHERE issuer_id = $1 AND mode = $2 AND disabled_at IS NULL
        AND ($3::timestamptz IS NULL OR (created_at, id) > ($3, $4))
      ORDER BY created_at, id
      LIMIT $5`,
    [issuerId, mode, page.after?.createdAt ?? null, page.after?.id ?? null, page.limit + 1],
  );
  const items = rows.slice(0, page.limit);
  const last = items.at(-1);
  return { items: items.map(toSettings), next: rows.length > page.limit && last ? { createdAt: last.cursor_at, id: last.id } : undefined };
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

/** Opaque to callers (base64url); its layout may change without notice. */
export function encodeEndpointCursor(cursor: EndpointCursor): string {
  return Buffer.from(`${cursor.createdAt}|${cursor.id}`, 'utf8').toString('base64url');
}

/** Undefined for anything `encodeEndpointCursor` did not make. */
export function decodeEndpointCursor(text: string): EndpointCursor | undefined {
  const match = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)\|(whe_[0-9A-Za-z]{16})$/.exec(Buffer.from(text, 'base64url').toString('utf8'));
  return match ? { createdAt: match[1], id: match[2] } : undefined;
}
