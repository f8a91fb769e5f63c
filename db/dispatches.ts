// Reads of the dispatch projection for the API. The projection is written only by the dispatch
// workflow's activity; the API never writes it.
import type { ConfidenceLevel, DispatchStatus, ExceptionReason } from '../domain/schemas.js';
import type { Pool } from './pool.js';

export interface DispatchRow {
  id: string;
  issuerId: string;
  mode: 'live' | 'test';
  status: DispatchStatus;
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
}

// Named (prepared) statements. `record::text` returns the stored JSON text unchanged, so the API
// sends it without parsing and re-serialising.
const BY_ID = {
  name: 'dispatch-by-id',
  text: `SELECT id, issuer_id, mode, status, window_min, window_max, confidence_level, exception_reason,
                country_code, locale, registration, record::text AS record_json
           FROM dispatches WHERE id = $1`,
};

export type DispatchAccessRow = Pick<DispatchRow, 'issuerId' | 'mode' | 'recordJson'>;

// The hot path of GET /v1/status/{id}: only what the access check and the response need.
const RECORD_BY_ID = {
  name: 'dispatch-record-by-id',
  text: 'SELECT issuer_id, mode, record::text AS record_json FROM dispatches WHERE id = $1',
};

export async function findDispatchRecord(pool: Pool, id: string): Promise<DispatchAccessRow | undefined> {
  const { rows } = await pool.query({ ...RECORD_BY_ID, values: [id] });
  const row = rows[0];
  return row && { issuerId: row.issuer_id, mode: row.mode, recordJson: row.record_json };
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
    windowMin: row.window_min,
    windowMax: row.window_max,
    confidenceLevel: row.confidence_level,
    exceptionReason: row.exception_reason,
    countryCode: row.country_code,
    locale: row.locale,
    registration: row.registration,
    recordJson: row.record_json,
  };
}
