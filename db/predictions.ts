// Reads of the prediction log (migration 1732280000000_prediction_log.sql), which db/projection.ts
// writes in the same statement as each projection version: a dispatch's predictions over time, and
// the pairs behind `predictions quality` (the window predicted at registration beside the actual
// delivery date of the service's own delivered dispatches).
import type { PredictionOutcome } from '../domain/prediction-quality.js';
import type { ConfidenceLevel, DispatchStatus } from '../domain/schemas.js';
import type { Pool } from './pool.js';

export interface LoggedPrediction {
  version: number;
  computedAt: Date;
  /** The dispatch's status when the prediction was made. */
  status: DispatchStatus;
  window: { min: string; max: string };
  confidence: ConfidenceLevel;
}

/** Every prediction served for the dispatch, oldest first (empty for an unknown id). */
export async function listPredictions(pool: Pool, dispatchId: string): Promise<LoggedPrediction[]> {
  const { rows } = await pool.query<{
    version: number;
    computed_at: Date;
    status: DispatchStatus;
    window_min: string;
    window_max: string;
    confidence_level: ConfidenceLevel;
  }>(
    `SELECT version, computed_at, status, window_min, window_max, confidence_level
       FROM prediction_log WHERE dispatch_id = $1 ORDER BY version`,
    [dispatchId],
  );
  return rows.map((r) => ({
    version: r.version,
    computedAt: r.computed_at,
    status: r.status,
    window: { min: r.window_min, max: r.window_max },
    confidence: r.confidence_level,
  }));
}

export interface QualityFilter {
  /** Only dispatches dispatched on or after this date (YYYY-MM-DD, UTC). */
  since?: string;
  /** Only this issuer's dispatches. */
  issuerId?: string;
}

/**
 * The service's own live deliveries, each with the window predicted at registration (projection
 * version 1) and the delivery date recorded in the transit history. Dispatches registered before the
 * log existed have no version 1 there and are left out; so are test-mode ones, whose deliveries are
 * test helpers' rather than a carrier's.
 */
export async function loadRegistrationOutcomes(pool: Pool, filter: QualityFilter = {}): Promise<PredictionOutcome[]> {
  const { rows } = await pool.query<{
    country_code: string;
    confidence_level: ConfidenceLevel;
    window_min: string;
    window_max: string;
    delivered_date: string;
  }>(
    `SELECT d.country_code, p.confidence_level, p.window_min, p.window_max, h.delivered_date
       FROM transit_history h
       JOIN dispatches d ON d.id = h.dispatch_id
       JOIN prediction_log p ON p.dispatch_id = h.dispatch_id AND p.version = 1
      WHERE h.source = 'service' AND d.mode = 'live'
        AND ($1::date IS NULL OR d.dispatch_date >= $1::date::timestamp AT TIME ZONE 'UTC')
        AND ($2::text IS NULL OR d.issuer_id = $2)`,
    [filter.since ?? null, filter.issuerId ?? null],
  );
  return rows.map((r) => ({
    countryCode: r.country_code,
    confidence: r.confidence_level,
    window: { min: r.window_min, max: r.window_max },
    deliveredDate: r.delivered_date,
  }));
}
