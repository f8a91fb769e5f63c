// Tables: dispatches (the projection GET /v1/status reads): reads for the API (one dispatch by id;
// the keyset-paginated list that GET /v1/dispatches and the dashboard's dispatch search share), and
// what a closed dispatch's workflow starts again from. Its one writer is a dispatch's change,
// db/dispatch-changes.ts (the dispatch workflow's activity); the API never writes it.
import type { StatusRecord } from '../domain/dispatch-schemas.js';
import type { ConfidenceLevel, DispatchStatus, ExceptionReason } from '../domain/vocabulary.js';
import type { Pool } from './pool.js';
import { CURSOR_AT, creationCursors, creationPage, type CreationCursor } from './creation-cursor.js';

export interface DispatchRow {
  id: string;
  issuerId: string;
  mode: 'live' | 'test';
  status: DispatchStatus;
  dispatchDate: Date;
  windowMin: string;
  windowMax: string;
  confidenceLevel: ConfidenceLevel;
  exceptionReason: ExceptionReason | null;
  countryCode: string;
  locale: string | null;
  /** The canonical registration body (jsonb, parsed). */
  registration: unknown;
  /** The status record as stored: JSON text, sent as is. */
  recordJson: string;
  /** The projection version (bigint, as text): every write of the record makes a newer one (the status read's ETag). */
  version: string;
}

/**
 * A dispatch whose erasure was requested is a tombstone from that moment (docs/privacy.md "Erasure"):
 * the reads below no longer see its row, though it stays until the erasure's workflow removes it a
 * few seconds later, so every route answers as for an erased one (404 saying so, 409 for a
 * registration; a feed's checkpoint naming it is ignored, db/feed-checkpoints.ts; its webhook
 * events are neither shown nor replayed, db/webhook-event-reads.ts and db/webhook-replays.ts). One
 * probe of the erasures' unique index, in the same statement; `dispatchId` names the column that
 * holds the id.
 */
export const notErased = (dispatchId = 'dispatches.id') =>
  `NOT EXISTS (SELECT 1 FROM erasures erased WHERE erased.dispatch_id = ${dispatchId})`;
const NOT_ERASED = notErased();

// Named (prepared) statements. `record::text` returns the stored JSON text unchanged, so the API
// sends it without parsing and re-serialising.
const BY_ID = {
  name: 'dispatch-by-id',
  text: `SELECT id, issuer_id, mode, status, dispatch_date, window_min, window_max, confidence_level, exception_reason,
                country_code, locale, registration, record::text AS record_json, version::text
           FROM dispatches WHERE id = $1 AND ${NOT_ERASED}`,
};

export type DispatchAccessRow = Pick<DispatchRow, 'issuerId' | 'mode' | 'recordJson' | 'version'>;

// The hot path of GET /v1/status/{id}: only what the access check and the response need.
const RECORD_BY_ID = {
  name: 'dispatch-record-by-id',
  text: `SELECT issuer_id, mode, record::text AS record_json, version::text FROM dispatches WHERE id = $1 AND ${NOT_ERASED}`,
};

export async function findDispatchRecord(pool: Pool, id: string): Promise<DispatchAccessRow | undefined> {
  const { rows } = await pool.query({ ...RECORD_BY_ID, values: [id] });
  const row = rows[0];
  return row && { issuerId: row.issuer_id, mode: row.mode, recordJson: row.record_json, version: row.version };
}

export async function findDispatch(pool: Pool, id: string): Promise<DispatchRow | undefined> {
  const { rows } = await pool.query({ ...BY_ID, values: [id] });
  const row = rows[0];
  if (!row) return undefined;
  return {
    id: row.id,
    issuerId: row.issuer_id,
    mode: row.mode,
    status: row.status,
    dispatchDate: row.dispatch_date,
    windowMin: row.window_min,
    windowMax: row.window_max,
    confidenceLevel: row.confidence_level,
    exceptionReason: row.exception_reason,
    countryCode: row.country_code,
    locale: row.locale,
    registration: row.registration,
    recordJson: row.record_json,
    version: row.version,
  };
}

// ---------- the list (GET /v1/dispatches, and the dashboard's dispatch search) ----------

export interface DispatchListFilter {
  issuerId: string;
  mode: 'live' | 'test';
  status?: DispatchStatus;
  countryCode?: string;
  /** Inclusive lower bound of created_at, ISO 8601 with any offset RFC 3339 allows and any year 0000–9999. */
  createdAfter?: string;
  /** Exclusive upper bound of created_at, as createdAfter. */
  createdBefore?: string;
  /** Page size; the caller bounds it. */
  limit: number;
  /** Continue after this position (the `next` of the previous page). */
  after?: CreationCursor;
}

export interface DispatchListItem {
  id: string;
  status: DispatchStatus;
  countryCode: string;
  createdAt: string;
  /** The status record as GET /v1/status returns it. */
  record: unknown;
}

export interface DispatchPage {
  items: DispatchListItem[];
  /** Present when more rows may follow. */
  next?: CreationCursor;
}

// Keyset pagination (db/creation-cursor.ts), newest first: a new dispatch sorts before every
// cursor, so it never shifts a later page.
const LIST = `
  SELECT id, status, country_code, record, ${CURSOR_AT} AS cursor_at
    FROM dispatches
   WHERE issuer_id = $1 AND mode = $2 AND ${NOT_ERASED}
     AND ($3::text IS NULL OR status = $3)
     AND ($4::bpchar IS NULL OR country_code = $4::bpchar)
     AND ($5::timestamptz IS NULL OR created_at >= $5)
     AND ($6::timestamptz IS NULL OR created_at < $6)
     AND ($7::timestamptz IS NULL OR (created_at, id) < ($7, $8::uuid))
   ORDER BY created_at DESC, id DESC
   LIMIT $9`;

/** One issuer's dispatches of one mode, newest first, one page at a time. */
export async function listDispatches(pool: Pool, filter: DispatchListFilter): Promise<DispatchPage> {
  const { rows } = await pool.query(LIST, [
    filter.issuerId,
    filter.mode,
    filter.status ?? null,
    filter.countryCode ?? null,
    comparableInstant(filter.createdAfter),
    comparableInstant(filter.createdBefore),
    filter.after?.createdAt ?? null,
    filter.after?.id ?? null,
    // One row more than asked tells whether another page exists.
    filter.limit + 1,
  ]);
  return creationPage(rows, filter.limit, (row) => ({
    id: row.id,
    status: row.status,
    countryCode: row.country_code,
    createdAt: row.cursor_at,
    record: row.record,
  }));
}

const EARLIEST_COMPARED = Date.UTC(1970, 0, 1);
const LATEST_COMPARED = Date.UTC(9999, 11, 31);

/**
 * The instant as Postgres can take it: in UTC (Postgres refuses an offset beyond ±15:59, RFC 3339
 * allows ±23:59), and moved to 1970 or 9999 when beyond them (Postgres has no year 0, and no dispatch
 * was created outside them, so the filter means the same).
 */
function comparableInstant(iso: string | undefined): string | null {
  if (iso === undefined) return null;
  return new Date(Math.min(Math.max(Date.parse(iso), EARLIEST_COMPARED), LATEST_COMPARED)).toISOString();
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
const cursors = creationCursors(UUID);
export const encodeDispatchCursor = cursors.encode;
export const decodeDispatchCursor = cursors.decode;

// ---- The state a closed dispatch's workflow starts again from (ingest/carrier-events.ts).

/** What the projection holds of a dispatch, as its workflow was registered and last projected. */
export interface ProjectedDispatchRow {
  id: string;
  issuerId: string;
  mode: 'live' | 'test';
  dispatchDate: string;
  postalCode: string;
  countryCode: string;
  locale: string | null;
  carrier: string | null;
  trackingNumber: string | null;
  reference: string | null;
  /** The registration body as stored (parsed jsonb). */
  registration: unknown;
  version: number;
  windowMin: string;
  windowMax: string;
  confidenceLevel: ConfidenceLevel;
  record: StatusRecord;
}

export async function findProjectedDispatch(pool: Pool, id: string): Promise<ProjectedDispatchRow | undefined> {
  const { rows } = await pool.query(
    `SELECT id, issuer_id, mode, dispatch_date, postal_code, country_code, locale, carrier, tracking_number, reference,
            registration, version, window_min, window_max, confidence_level, record
       FROM dispatches WHERE id = $1`,
    [id],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    id: row.id,
    issuerId: row.issuer_id,
    mode: row.mode,
    dispatchDate: (row.dispatch_date as Date).toISOString(),
    postalCode: row.postal_code,
    countryCode: row.country_code,
    locale: row.locale,
    carrier: row.carrier,
    trackingNumber: row.tracking_number,
    reference: row.reference,
    registration: row.registration,
    version: row.version,
    windowMin: row.window_min,
    windowMax: row.window_max,
    confidenceLevel: row.confidence_level,
    record: row.record,
  };
}
