// Tables: tracking_links, tracking_page_branding, tracking_gate_failures, tracking_gate_passes; reads
// dispatches, issuers and carrier_events (effect `applied`) for the page. The cardholder's tracking
// page (docs/tracking-page.md "Links"): links per dispatch (only the token's SHA-256 is stored), an issuer's branding,
// the one query a page view makes, and the postal-code gate's count of wrong codes and its passes.
// Nothing is cached: a revoked link stops working on every API process at its next request.
import { randomBytes } from 'node:crypto';
import type { ConfidenceLevel, DispatchStatus, ExceptionReason } from '../domain/vocabulary.js';
import { CURSOR_AT, creationCursors, creationPage, type CreationCursor } from './creation-cursor.js';
import { notErased } from './dispatches.js';
import { idPattern, newId } from './ids.js';
import type { PageEvent } from '../domain/tracking-page.js';
import { trackingTokenHash, type TrackingPageBranding, type TrackingPageBrandingPatch } from '../domain/tracking-links.js';
import type { Pool } from './pool.js';

export interface TrackingLink {
  id: string;
  dispatchId: string;
  locale: string | null;
  requirePostalCode: boolean;
  expiresAt: Date;
  createdAt: Date;
  revokedAt: Date | null;
}

const LINK_COLUMNS = 'id, dispatch_id, locale, require_postal_code, expires_at, created_at, revoked_at';

interface LinkRow {
  id: string;
  dispatch_id: string;
  locale: string | null;
  require_postal_code: boolean;
  expires_at: Date;
  created_at: Date;
  revoked_at: Date | null;
}

function toLink(row: LinkRow): TrackingLink {
  return {
    id: row.id,
    dispatchId: row.dispatch_id,
    locale: row.locale,
    requirePostalCode: row.require_postal_code,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}

/** Stores a link whose token the caller made; the dispatch's access was checked by the caller. */
export async function createTrackingLink(
  pool: Pool,
  input: { dispatchId: string; issuerId: string; mode: 'live' | 'test'; tokenHash: Buffer; locale: string | null; requirePostalCode: boolean; expiresAt: Date }, // prettier-ignore
): Promise<TrackingLink> {
  const { rows } = await pool.query<LinkRow>(
    `INSERT INTO tracking_links (id, dispatch_id, issuer_id, mode, token_hash, locale, require_postal_code, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${LINK_COLUMNS}`,
    [newId('tl'), input.dispatchId, input.issuerId, input.mode, input.tokenHash, input.locale, input.requirePostalCode, input.expiresAt],
  );
  return toLink(rows[0]);
}

const cursors = creationCursors(idPattern('tl'));
export const encodeLinkCursor = cursors.encode;
export const decodeLinkCursor = cursors.decode;

/** A dispatch's links, newest first, a page at a time (keyset on created_at, id). */
export async function pageTrackingLinks(
  pool: Pool,
  dispatchId: string,
  options: { limit: number; after?: CreationCursor },
): Promise<{ items: TrackingLink[]; next?: CreationCursor }> {
  const { rows } = await pool.query<LinkRow & { cursor_at: string }>(
    `SELECT ${LINK_COLUMNS},
            ${CURSOR_AT} AS cursor_at
       FROM tracking_links
      WHERE dispatch_id = $1
        AND ($2::timestamptz IS NULL OR (created_at, id) < ($2::timestamptz, $3::text))
      ORDER BY created_at DESC, id DESC
      LIMIT $4`,
    [dispatchId, options.after?.createdAt ?? null, options.after?.id ?? null, options.limit + 1],
  );
  return creationPage(rows, options.limit, toLink);
}

/** A link of the dispatch, or undefined. */
export async function findTrackingLink(pool: Pool, dispatchId: string, linkId: string): Promise<TrackingLink | undefined> {
  const { rows } = await pool.query<LinkRow>(`SELECT ${LINK_COLUMNS} FROM tracking_links WHERE id = $1 AND dispatch_id = $2`, [
    linkId,
    dispatchId,
  ]);
  return rows[0] && toLink(rows[0]);
}

/** Revokes a link of the dispatch (already revoked: unchanged); false when the dispatch has no such link. */
export async function revokeTrackingLink(pool: Pool, dispatchId: string, linkId: string): Promise<boolean> {
  const { rowCount } = await pool.query(
    'UPDATE tracking_links SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 AND dispatch_id = $2',
    [linkId, dispatchId],
  );
  return rowCount === 1;
}

// ---------- branding ----------

const NO_BRANDING: TrackingPageBranding = { display_name: null, accent_color: null, activation_url: null, support_url: null, support_phone: null }; // prettier-ignore

export async function findBranding(pool: Pool, issuerId: string): Promise<TrackingPageBranding> {
  const { rows } = await pool.query(
    'SELECT display_name, accent_color, activation_url, support_url, support_phone FROM tracking_page_branding WHERE issuer_id = $1',
    [issuerId],
  );
  return rows[0] ?? { ...NO_BRANDING };
}

/** Changes the fields `patch` holds (null clears one) and answers the whole branding. */
export async function updateBranding(pool: Pool, issuerId: string, patch: TrackingPageBrandingPatch): Promise<TrackingPageBranding> {
  const current = await findBranding(pool, issuerId);
  const next: TrackingPageBranding = { ...current };
  for (const [field, value] of Object.entries(patch)) if (value !== undefined) next[field as keyof TrackingPageBranding] = value;
  const { rows } = await pool.query(
    `INSERT INTO tracking_page_branding (issuer_id, display_name, accent_color, activation_url, support_url, support_phone)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (issuer_id) DO UPDATE SET display_name = EXCLUDED.display_name, accent_color = EXCLUDED.accent_color,
       activation_url = EXCLUDED.activation_url, support_url = EXCLUDED.support_url, support_phone = EXCLUDED.support_phone,
       updated_at = now()
     RETURNING display_name, accent_color, activation_url, support_url, support_phone`,
    [issuerId, next.display_name, next.accent_color, next.activation_url, next.support_url, next.support_phone],
  );
  return rows[0];
}

// ---------- the page ----------

export interface PageRecord {
  linkId: string;
  tokenHash: Buffer;
  linkLocale: string | null;
  requirePostalCode: boolean;
  expiresAt: Date;
  revoked: boolean;
  issuerName: string;
  branding: TrackingPageBranding | null;
  status: DispatchStatus;
  windowMin: string;
  windowMax: string;
  confidence: ConfidenceLevel;
  exceptionReason: ExceptionReason | null;
  countryCode: string;
  postalCode: string;
  registeredLocale: string | null;
  updatedAt: Date;
  events: PageEvent[];
}

// One round trip per page view: the link by its token's hash, its dispatch's projection, the issuer
// and its branding, and the carrier events that changed the status (the carrier event log's primary
// key starts with dispatch_id). The effect is written by the worker (db/carrier-events.ts); this
// only reads it. Times come as epoch milliseconds and the events as one text of
// `status epoch_ms reason` items (statuses and reasons are identifiers without spaces or commas):
// half the database and parsing time of timestamptz columns and json_agg (bench/tracking-page). A
// link of a dispatch whose erasure was requested is unknown at once, as it will be once erased.
const PAGE_BY_TOKEN = {
  name: 'tracking-page-by-token',
  text: `SELECT l.id, l.token_hash, l.locale AS link_locale, l.require_postal_code,
                (extract(epoch FROM l.expires_at) * 1000)::float8 AS expires_ms, l.revoked_at IS NOT NULL AS revoked,
                i.name AS issuer_name, b.issuer_id IS NOT NULL AS branded, b.display_name, b.accent_color, b.activation_url,
                b.support_url, b.support_phone,
                d.status, d.window_min::text, d.window_max::text, d.confidence_level, d.exception_reason,
                d.country_code, d.postal_code, d.locale, (extract(epoch FROM d.updated_at) * 1000)::float8 AS updated_ms,
                (SELECT string_agg(e.status || ' ' || (extract(epoch FROM e.occurred_at) * 1000)::bigint || ' ' || coalesce(e.reason, ''), ',')
                   FROM carrier_events e WHERE e.dispatch_id = d.id AND e.effect = 'applied') AS events
           FROM tracking_links l
           JOIN dispatches d ON d.id = l.dispatch_id
           JOIN issuers i ON i.id = l.issuer_id
           LEFT JOIN tracking_page_branding b ON b.issuer_id = l.issuer_id
          WHERE l.token_hash = $1 AND ${notErased('l.dispatch_id')}`,
};

function parseEvents(text: string | null): PageEvent[] {
  if (!text) return [];
  return text.split(',').map((item) => {
    const [status, ms, reason] = item.split(' ');
    return { status: status as DispatchStatus, occurredAt: new Date(Number(ms)), reason: (reason || null) as ExceptionReason | null };
  });
}

/**
 * Whether the token is a link of an erased dispatch: one whose erasure has completed (its hash kept
 * in erased_tracking_links) or was requested (the link still there, the dispatch a tombstone). Asked
 * only of a token `findPageByToken` did not find.
 */
export async function isErasedLinkToken(pool: Pool, token: string): Promise<boolean> {
  const { rows } = await pool.query({
    name: 'tracking-link-erased',
    text: `SELECT 1 FROM erased_tracking_links WHERE token_hash = $1
           UNION ALL
           SELECT 1 FROM tracking_links l JOIN erasures e ON e.dispatch_id = l.dispatch_id WHERE l.token_hash = $1
           LIMIT 1`,
    values: [trackingTokenHash(token)],
  });
  return rows.length > 0;
}

/** Everything a page view needs, found by the token's hash; undefined for an unknown token. */
export async function findPageByToken(pool: Pool, token: string): Promise<PageRecord | undefined> {
  const { rows } = await pool.query({ ...PAGE_BY_TOKEN, values: [trackingTokenHash(token)] });
  const row = rows[0];
  if (!row) return undefined;
  return {
    linkId: row.id,
    tokenHash: row.token_hash,
    linkLocale: row.link_locale,
    requirePostalCode: row.require_postal_code,
    expiresAt: new Date(row.expires_ms),
    revoked: row.revoked,
    issuerName: row.issuer_name,
    branding: row.branded
      ? { display_name: row.display_name, accent_color: row.accent_color, activation_url: row.activation_url, support_url: row.support_url, support_phone: row.support_phone } // prettier-ignore
      : null,
    status: row.status,
    windowMin: row.window_min,
    windowMax: row.window_max,
    confidence: row.confidence_level,
    exceptionReason: row.exception_reason,
    countryCode: row.country_code.trim(),
    postalCode: row.postal_code,
    registeredLocale: row.locale,
    updatedAt: new Date(row.updated_ms),
    events: parseEvents(row.events),
  };
}

// ---------- the postal-code gate ----------

export const GATE_MAX_WRONG = 5;
export const GATE_WINDOW_MINUTES = 15;

/**
 * One attempt at the gate, serialised per link (the link's row is locked), so concurrent wrong
 * codes cannot pass the limit: `limited` once GATE_MAX_WRONG wrong codes were given within
 * GATE_WINDOW_MINUTES (a right code does not reset the count), else the outcome of `isRight`, a
 * wrong one recorded.
 */
export async function attemptGate(pool: Pool, linkId: string, isRight: () => boolean): Promise<'limited' | 'right' | 'wrong'> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT 1 FROM tracking_links WHERE id = $1 FOR UPDATE', [linkId]);
    // Older wrong codes no longer count: forgotten here, so the table holds at most the last window's.
    await client.query(`DELETE FROM tracking_gate_failures WHERE link_id = $1 AND failed_at <= now() - make_interval(mins => $2)`, [
      linkId,
      GATE_WINDOW_MINUTES,
    ]);
    const { rows } = await client.query<{ wrong: number }>(
      `SELECT count(*)::int AS wrong FROM tracking_gate_failures
        WHERE link_id = $1 AND failed_at > now() - make_interval(mins => $2)`,
      [linkId, GATE_WINDOW_MINUTES],
    );
    let outcome: 'limited' | 'right' | 'wrong';
    if (rows[0].wrong >= GATE_MAX_WRONG) outcome = 'limited';
    else if (isRight()) outcome = 'right';
    else {
      await client.query('INSERT INTO tracking_gate_failures (link_id) VALUES ($1)', [linkId]);
      outcome = 'wrong';
    }
    await client.query('COMMIT');
    return outcome;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** A new pass for a link (the gate's cookie value), valid until `expiresAt`; only its hash is stored. */
export async function createGatePass(pool: Pool, linkId: string, expiresAt: Date): Promise<string> {
  const pass = randomBytes(32).toString('base64url');
  await pool.query('DELETE FROM tracking_gate_passes WHERE expires_at < now()');
  await pool.query('INSERT INTO tracking_gate_passes (pass_hash, link_id, expires_at) VALUES ($1, $2, $3)', [
    trackingTokenHash(pass),
    linkId,
    expiresAt,
  ]);
  return pass;
}

export async function gatePassValid(pool: Pool, linkId: string, pass: string): Promise<boolean> {
  const { rowCount } = await pool.query({
    name: 'tracking-gate-pass',
    text: 'SELECT 1 FROM tracking_gate_passes WHERE pass_hash = $1 AND link_id = $2 AND expires_at > now()',
    values: [trackingTokenHash(pass), linkId],
  });
  return rowCount === 1;
}
