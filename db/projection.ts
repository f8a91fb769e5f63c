// Writes of the dispatch projection (the rows GET /v1/status reads). Only the dispatch workflow's
// activities call this. The upsert is monotonic: a row is replaced only by a strictly newer
// version, so a late retry of an old write can never undo a newer one. The same statement keeps
// the version's prediction in the prediction log (db/predictions.ts), once per version.
import type { Pool } from './pool.js';
import type { StatusRecord } from '../domain/schemas.js';

export interface ProjectionRow {
  id: string;
  issuerId: string;
  mode: 'live' | 'test';
  version: number;
  status: string;
  dispatchDate: string;
  postalCode: string;
  countryCode: string;
  locale?: string;
  carrier?: string;
  trackingNumber?: string;
  reference?: string;
  /** Canonical JSON of the registration body. */
  registration: string;
  windowMin: string;
  windowMax: string;
  confidenceLevel: string;
  exceptionReason?: string;
  record: StatusRecord;
}

/** Returns true when this write became the current row, false when a newer version was already there. */
export async function upsertProjection(pool: Pool, row: ProjectionRow): Promise<boolean> {
  // One statement, so the log and the projection are written together or not at all. A retry of a
  // version already logged keeps the first row: the prediction that was actually served.
  const result = await pool.query<{ written: number }>({
    name: 'projection-upsert',
    text: `WITH projected AS (
       INSERT INTO dispatches (id, issuer_id, mode, version, status, dispatch_date, postal_code, country_code, locale,
                               carrier, tracking_number, reference, registration, window_min, window_max,
                               confidence_level, exception_reason, record)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::jsonb, $14, $15, $16, $17, $18::json)
       ON CONFLICT (id) DO UPDATE SET
         version = EXCLUDED.version, status = EXCLUDED.status, window_min = EXCLUDED.window_min,
         window_max = EXCLUDED.window_max, confidence_level = EXCLUDED.confidence_level,
         exception_reason = EXCLUDED.exception_reason, record = EXCLUDED.record, updated_at = now()
       WHERE dispatches.version < EXCLUDED.version
       RETURNING 1
     ), logged AS (
       INSERT INTO prediction_log (dispatch_id, version, status, window_min, window_max, confidence_level)
       VALUES ($1, $4, $5, $14, $15, $16) ON CONFLICT (dispatch_id, version) DO NOTHING
     )
     SELECT count(*)::int AS written FROM projected`,
    values: [
      row.id,
      row.issuerId,
      row.mode,
      row.version,
      row.status,
      row.dispatchDate,
      row.postalCode,
      row.countryCode,
      row.locale ?? null,
      row.carrier ?? null,
      row.trackingNumber ?? null,
      row.reference ?? null,
      row.registration,
      row.windowMin,
      row.windowMax,
      row.confidenceLevel,
      row.exceptionReason ?? null,
      JSON.stringify(row.record),
    ],
  });
  return result.rows[0].written === 1;
}
