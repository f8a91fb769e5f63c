// Writes of the dispatch projection (the rows GET /v1/status reads). Only the dispatch workflow's
// activities call this. The upsert is monotonic: a row is replaced only by a strictly newer
// version, so a late retry of an old write can never undo a newer one.
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
  const result = await pool.query(
    `INSERT INTO dispatches (id, issuer_id, mode, version, status, dispatch_date, postal_code, country_code, locale,
                             carrier, tracking_number, reference, registration, window_min, window_max,
                             confidence_level, exception_reason, record)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::jsonb, $14, $15, $16, $17, $18::json)
     ON CONFLICT (id) DO UPDATE SET
       version = EXCLUDED.version, status = EXCLUDED.status, window_min = EXCLUDED.window_min,
       window_max = EXCLUDED.window_max, confidence_level = EXCLUDED.confidence_level,
       exception_reason = EXCLUDED.exception_reason, record = EXCLUDED.record, updated_at = now()
     WHERE dispatches.version < EXCLUDED.version`,
    [
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
  );
  return result.rowCount === 1;
}
